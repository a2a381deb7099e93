// The kill matrix of a --mutants run: for each mutant, which properties caught it (FAILED on it).
// A mutant no property caught SURVIVED: the catalogue has no teeth for that bug, and verify fails.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "properties/verify/verify_run.h"

namespace ropecheck {

struct MutantRow {
  std::string mutant;
  std::vector<std::optional<Status>> cells;  // per KillMatrix::properties; nullopt: not run on it
  std::vector<std::string> killed_by;        // the properties that FAILED on it
  int planned = 0;                           // selected properties of its kind
  int ran = 0;                               // properties run on it (PASSED or FAILED)

  bool killed() const { return !killed_by.empty(); }
};

struct KillMatrix {
  std::vector<std::string> properties;  // columns: every property run on some mutant
  std::vector<MutantRow> mutants;       // rows: the subjects judged as mutants, in run order
};

KillMatrix kill_matrix(const VerifyRun& run);

}  // namespace ropecheck
