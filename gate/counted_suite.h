// Counting a side's cases, each in its own callgrind process (counted_runner.h), a few at a time:
// what `ropecheck count` runs for this binary and a counted gate runs for each side. Counts do
// not depend on what else runs, so the processes may share the machine (unlike timed ones).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "bench/format/counted_json.h"

namespace ropecheck {

struct CountedSuite {
  std::filesystem::path valgrind;
  std::vector<std::string> bench_command;  // ends in "bench"
  std::vector<std::string> cases;          // names
  int calls = 10;                          // collected per case
  int jobs = 1;                            // processes at a time
  CycleModel model;
  std::string counted_isa, isa_note;       // recorded in the run
};

// The case names a side's bench has for `filter` when it runs under Valgrind (its core only,
// --tool=none: no AVX-512 there, so only what can be counted is listed); `dir` holds the log.
// Throws InvalidInput when the listing fails.
std::vector<std::string> list_countable_cases(const std::filesystem::path& valgrind,
                                              const std::vector<std::string>& bench_command,
                                              const std::string& filter, const std::filesystem::path& dir);

// Counts every case into dir/case-NN/ and returns the run (also written as dir/counted.json).
// Throws InvalidInput when a case's process fails.
CountedRun count_suite(const CountedSuite& suite, const std::filesystem::path& dir);

// The same for several suites (a gate's two sides) from one pool of suite.jobs processes (the
// first suite's), case by case across the suites: a case's processes run side by side, so the
// slowest case (attention) of each side runs at once rather than one after the other.
std::vector<CountedRun> count_suites(const std::vector<CountedSuite>& suites,
                                     const std::vector<std::filesystem::path>& dirs);

// The exact filter of one case name: ^name$ with regex characters escaped.
std::string exact_name_filter(const std::string& name);

}  // namespace ropecheck
