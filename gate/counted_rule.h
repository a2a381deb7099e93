// The gate's decision on counted cases (gate/README.md, "Counted"): one process per side, no
// statistics. Counts of one build agree across processes to within kCountedSpreadPercent, so a
// change in estimated cycles is either clearly past the threshold, clearly below it, or within
// that spread of it. Pure: tests feed it counts (tests/gate/counted_rule_test.cc).
#pragma once

#include <string>
#include <vector>

#include "bench/format/counted_json.h"
#include "gate/gate_rule.h"

namespace ropecheck {

// The most the estimated cycles per call of one case of one build may differ between two
// processes, in per cent. Instructions do not differ in one environment (one more environment
// variable costs the scalar kernels' getenv() 4 instructions of 161466, 0.0025%). Misses may,
// where a buffer's place decides which simulated cache sets it shares: over processes whose
// environments differed in length (scripts/counted-spread.sh, gate/README.md "What varies") the
// gated cases moved by 0.0005% at most. This is twenty times that, so that a layout that a code
// change moves elsewhere is not read as its cost.
inline constexpr double kCountedSpreadPercent = 0.01;

struct CountedVerdict {
  std::string name;
  GateVerdict verdict = GateVerdict::inconclusive;
  double base_cycles = 0, current_cycles = 0;  // estimated, per call
  // current / base per call (1 where both are 0; NaN where only the base is: "from none").
  double cycles_ratio = 1, instructions_ratio = 1, l1_misses_ratio = 1, ll_misses_ratio = 1;
  // Non-empty when the misses' change differs from the instructions' by more than a point and
  // moves the estimate by more than 0.1%: a change of memory traffic that the cycle estimate
  // weighs but a reader should see named.
  std::string memory_note;
};

// REGRESSION when the change in estimated cycles exceeds threshold + kCountedSpreadPercent, PASS
// when it is below threshold - kCountedSpreadPercent, else INCONCLUSIVE; `model` (the runs') weighs
// the misses for the memory note. Throws InvalidInput for a threshold outside (0, 100) or cases
// that counted nothing.
CountedVerdict judge_counted(const CountedCase& base, const CountedCase& current, double threshold_percent,
                             const CycleModel& model);

// "+1.23%", or "from none" for a ratio over a base of zero (NaN).
std::string counted_change_text(double ratio);

struct CountedJudgement {
  std::vector<CountedVerdict> cases;  // by name
  std::vector<std::string> unpaired;  // counted on one side only
  std::size_t regressions = 0, inconclusive = 0, passed = 0;
  int exit_code = 0;  // as GateJudgement's
};

// Every case counted on both sides, judged.
CountedJudgement judge_counted_runs(const CountedRun& base, const CountedRun& current, double threshold_percent);

}  // namespace ropecheck
