// `ropecheck compare BASE CUR`: the verdict on two stored bench results (compare_rule.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>


namespace ropecheck {

// `ropecheck compare BASE CUR`: the CI gate on two Google Benchmark JSON files (bench.json).
struct CompareOptions {
  std::filesystem::path base;     // a bench.json, or a directory holding one
  std::filesystem::path current;  // the same, for the run under test
  double threshold_percent = 5;   // a drop of the medians must exceed this to fail, in [0, 100)
  double alpha = 0.05;            // family-wise (Holm) significance level, in (0, 1)
  std::filesystem::path json_out;  // empty: current/compare.json when current is a directory
};

// Compares the per-repetition samples of every case in both files (bench_compare.h has the rule),
// prints a table and a summary line to `out`, writes compare.json (see json_out). Returns kExitOk,
// or kExitFailed when a case regressed; throws InvalidInput for a missing or malformed file, a
// case with fewer than 3 repetitions, no case in both files, or a bad threshold or alpha.
int run_compare(const CompareOptions& options, std::ostream& out);

}  // namespace ropecheck
