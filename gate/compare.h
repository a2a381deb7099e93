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
  // A bench.json or a directory holding one (samples: its repetitions), or a directory of several
  // runs, e.g. a gate's DIR/base (samples: one per process, the median of its repetitions).
  std::filesystem::path base;
  std::filesystem::path current;  // the same kind, for the run under test
  double threshold_percent = 5;   // a drop of the medians must exceed this to fail, in [0, 100)
  // Two counted runs (counted.json, or folders holding one: `ropecheck count`, a counted gate's
  // DIR/counted/base) are judged on estimated cycles at this threshold instead (counted_rule.h);
  // --threshold sets both.
  double counted_threshold_percent = 1;
  double alpha = 0.05;            // family-wise (Holm) significance level, in (0, 1)
  std::filesystem::path json_out;  // empty: current/compare.json when current is a directory
};

// Compares the samples of every case on both sides (compare_rule.h has the rule), prints a table
// and a summary line to `out`, writes compare.json (see json_out). Returns kExitOk, or kExitFailed
// when a case regressed; throws InvalidInput for a missing or malformed file, a case with fewer
// than 3 samples, sides of different kinds, no case on both sides, or a bad threshold or alpha.
int run_compare(const CompareOptions& options, std::ostream& out);

// The same for two counted runs: the counted table, a summary line and compare.json; exit 0 PASS,
// 1 a REGRESSION, 3 INCONCLUSIVE (within the counts' spread of the threshold).
int run_compare_counted(const CompareOptions& options, std::ostream& out);

}  // namespace ropecheck
