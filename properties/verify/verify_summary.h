// The verdict of a verify run: counts by status, and the exit code of the CLI contract
// (0: every real subject passed and, in a --mutants run, every mutant was killed; 1 otherwise).
#pragma once

#include "properties/verify/kill_matrix.h"
#include "properties/verify/verify_run.h"

namespace ropecheck {

struct VerifySummary {
  int passed = 0;
  int failed = 0;
  int skipped = 0;
  int mistrusted = 0;  // passed while proving nothing (property.h): neither a pass nor a failure
  int unexpected_failures = 0;  // FAILED results on subjects that must pass
  int mutants_killed = 0;
  int mutants_survived = 0;
  int exit_code = 0;
};

VerifySummary summarize(const VerifyRun& run, const KillMatrix& matrix);

}  // namespace ropecheck
