// Which per-process value a gated case is judged on: real time, or time as a multiple of its
// same-run probe (gate_rounds.h's GateMeasure), chosen per case from pilot rounds.
//
// Why per case: the probe cancels what moves the whole machine (a neighbour, frequency), and on
// the AVX-512 machine of bench/README.md its ratios were the quieter for every gated case (median
// CV 2.35% against 4.8%). On an AVX2-only machine it was not: for the scalar bf16 kernel and the
// fp16 in-cache prefill, real-time ratios moved 0.7-2.0% between rounds and probe-normalised ones
// 8-11%, because there the probe, not the case, was what moved. Which is quieter depends on the
// machine and the case, so the gate measures it.
//
// Why pilot rounds: choosing the measure whose ratios came out quieter in the judged rounds
// themselves would pick, among two noisy spreads, the smaller, and the t interval built on it
// would be too narrow (a false REGRESSION more often than alpha). Pilot rounds are run like
// judged rounds (a fresh process per case and side) but are not judged: the choice is
// independent of the rounds the test sees, and the test keeps its level.
#pragma once

#include <limits>
#include <string_view>
#include <vector>

#include "gate/gate_rounds.h"

namespace ropecheck {

// How the gate picks each case's measure (`--measure`).
enum class MeasureRule {
  automatic,  // per case, from pilot rounds (choose_measure)
  limit,      // same-run limit wherever a case has a probe, else time
  time,       // real time
};
std::string_view to_string(MeasureRule rule);  // "auto", "limit", "time"

// The fewest pilot rounds `auto` accepts: a spread from 2 rounds has one degree of freedom.
inline constexpr std::size_t kMinPilotRounds = 3;

struct MeasureChoice {
  GateMeasure measure = GateMeasure::time;
  // Standard deviation of the log ratios current/base over the pilot rounds, per measure (in
  // log units, ~ the CV); NaN when that measure has no values (no probe) or no pilot was run.
  double time_spread = std::numeric_limits<double>::quiet_NaN();
  double limit_spread = std::numeric_limits<double>::quiet_NaN();
};

// Per case: limit when it has a probe in every pilot round and its log ratios spread no more
// than real time's, else time. Ties go to limit (the measure that was quieter on the machine
// where it was first calibrated). `limit_ratios` is empty for a case without a probe. Throws
// InvalidInput when there are fewer than kMinPilotRounds time ratios, when the two lists differ
// in length (limit non-empty), or for a ratio that is not finite and positive.
MeasureChoice choose_measure(const std::vector<double>& time_ratios,
                             const std::vector<double>& limit_ratios);

}  // namespace ropecheck
