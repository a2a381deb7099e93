// The CI gate's decision: two sets of bench cases (bench_json.h) in, a verdict per case out.
// Pure (no files, no printing) so that tests and reports can call it; `ropecheck compare`
// (compare_command.cc) prints and writes what it returns.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "bench/format/bench_json.h"

namespace ropecheck {

// compare.json's "schema", written by `ropecheck compare`; bump on a change that breaks a reader.
inline constexpr const char* kCompareSchemaId = "ropecheck.compare/1";

enum class Verdict {
  ok,               // the medians moved by no more than the threshold
  regression,       // current lower by more than the threshold, significantly: fails the gate
  faster,           // current higher by more than the threshold, significantly: never fails
  not_significant,  // moved by more than the threshold, but the samples overlap too much to say
  not_gated,        // a probe: the limit the cases are measured against, shown for context
  only_in_base,
  only_in_current,
};

// "ok", "REGRESSION", "faster", "not significant", "not gated", "only in base", "only in current".
std::string_view to_string(Verdict verdict);

struct CompareSettings {
  double threshold_percent = 5;  // a change of the medians must exceed this to count, >= 0
  double alpha = 0.05;           // family-wise error rate over the gated cases, in (0, 1)
};

struct CaseComparison {
  std::string name;
  Verdict verdict = Verdict::ok;
  // false: limit_fraction samples; true: 1/real_time in runs per second (a side lacks
  // limit_fraction), an absolute comparison that a slower or busier machine also moves.
  bool absolute = false;
  std::size_t base_n = 0, current_n = 0;
  double base_median = 0, current_median = 0;  // of the samples compared; higher is better
  double change = 0;                           // current_median / base_median - 1
  // The Mann-Whitney test of current against base (gated cases only): U of current, one-sided
  // p-values raw and Holm-adjusted over the gated cases, and p_adjusted in the direction of the
  // change (lower when change < 0, else higher).
  double u = 0;
  bool exact = false;
  double p_lower = 1, p_higher = 1;
  double p_lower_adjusted = 1, p_higher_adjusted = 1;
  double p_adjusted = 1;
};

struct Comparison {
  std::vector<CaseComparison> cases;  // by name: gated and probes, then only-in-one-file
  std::size_t gated = 0;              // cases tested (in both files, not probes): Holm's m
  std::map<Verdict, std::size_t> counts;
  // Why a verdict may be weaker than it looks, e.g. too few repetitions for any p below alpha.
  std::vector<std::string> warnings;

  bool regressed() const { return counts.contains(Verdict::regression); }
};

// The decision, per case in both files and not a probe:
//   REGRESSION  iff change < -threshold and Holm-adjusted p (H1: current lower) < alpha
//   faster      iff change > +threshold and Holm-adjusted p (H1: current higher) < alpha
//   ok          iff |change| <= threshold;  otherwise not significant.
// Throws InvalidInput for a threshold or alpha out of range, or when no case is in both files.
Comparison compare_benches(const std::map<std::string, BenchCase>& base,
                           const std::map<std::string, BenchCase>& current,
                           const CompareSettings& settings);

// Median of a non-empty sample (the mean of the middle two for an even size).
double median(std::vector<double> sample);

}  // namespace ropecheck
