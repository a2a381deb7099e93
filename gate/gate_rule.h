// The gate's decision on paired rounds: per case, the K per-round ratios current/base (one per
// pair of fresh processes) in, a verdict with its interval out. Pure (no files, no
// printing): `ropecheck gate` (gate.cc) prints and writes what it returns; tests feed it known
// values (tests/gate/gate_rule_test.cc).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ropecheck {

enum class GateVerdict {
  pass,          // the whole interval of the ratio lies below 1 + threshold
  regression,    // the whole interval lies above 1 + threshold: fails the gate (exit 1)
  inconclusive,  // the interval straddles 1 + threshold: too noisy for K rounds (exit 3)
  flagged,       // on a cache boundary of this machine (or excluded): reported, not gated
};

// "PASS", "REGRESSION", "INCONCLUSIVE", "flagged".
std::string_view to_string(GateVerdict verdict);

// The most a gate may trim from each end of a case's sorted rounds.
inline constexpr double kMaxTrim = 0.25;

struct GateSettings {
  double threshold_percent = 5;  // a slowdown must exceed this to fail, in (0, 100)
  double alpha = 0.05;           // family-wise error rate over the gated cases, in (0, 1)
  // The fraction of rounds dropped from each end of a case's sorted log ratios, in [0, kMaxTrim]
  // (Yuen's trimmed mean; 0: the plain paired t). On a shared machine some processes run a
  // kernel 1.4-1.7x slower than its neighbours in the same round, for reasons of their own
  // (bench/README.md): 2 such rounds in 10 were enough to leave an A/A case INCONCLUSIVE with
  // the plain t, while the ratios of the other rounds agreed to a few per cent.
  double trim = 0.2;
};

// The fewest rounds the rule accepts: a t interval from 2 rounds has 1 degree of freedom and is
// too wide to mean anything.
inline constexpr std::size_t kMinRounds = 3;

// One case's paired rounds. A ratio is time(current) / time(base) from the same round: > 1 slower.
struct CaseRounds {
  std::string name;
  std::vector<double> ratios;  // one per round, each finite and > 0
  std::string flagged;         // non-empty: why this case is reported but not gated
};

struct CaseVerdict {
  std::string name;
  GateVerdict verdict = GateVerdict::inconclusive;
  std::string flagged;   // the reason, for a flagged case
  std::size_t rounds = 0;
  double ratio = 1;              // exp of the (trimmed) mean log ratio
  double ratio_low = 1, ratio_high = 1;  // its interval, at the levels tested (judge_rounds)
  double noise_percent = 0;      // between-round noise: coefficient of variation of the ratios
  // The smallest slowdown (percent) that these rounds would call a REGRESSION with a probability
  // of about 80%, given the measured noise (Bonferroni level alpha/m: Holm's first step).
  double detectable_percent = 0;
  double p_regression = 1, p_pass = 1;  // one-sided, raw
  double p_regression_adjusted = 1;      // Holm over the gated cases
  // INCONCLUSIVE: the rounds at which this noise would resolve the measured ratio against the
  // threshold (none when the ratio sits on the threshold or needs more than kMaxRoundsAdvised),
  // and the threshold (percent) at which these rounds would PASS.
  std::optional<std::size_t> rounds_needed;
  double threshold_to_pass_percent = 0;
};

// Beyond this many rounds the advice is "no K in reach" rather than a number.
inline constexpr std::size_t kMaxRoundsAdvised = 1000;

struct GateJudgement {
  std::vector<CaseVerdict> cases;  // in the input's order
  std::size_t gated = 0;           // cases not flagged: Holm's m
  std::size_t regressions = 0, inconclusive = 0, passed = 0;
  int exit_code = 0;  // kExitFailed if any REGRESSION, else kExitInconclusive if any, else kExitOk
};

// Per case, with y = log(ratio) over K rounds, trimmed by settings.trim (g = floor(trim K) rounds
// dropped from each end, h = K - 2g kept; m the mean of the kept, s the sd of the winsorized
// sample, se = s sqrt(K) / h, t with h - 1 degrees of freedom: Yuen's test, which with trim 0 is
// the plain paired t) and L = log(1 + threshold):
//   p_regression = P(T >= (m - L) / se)   (H0: not slower than the threshold)
//   p_pass       = P(T <= (m - L) / se)   (H0: at least that much slower)
// REGRESSION iff the Holm-adjusted p_regression < alpha (over the gated cases: the chance of any
// false REGRESSION in a gate stays below alpha). PASS iff the raw p_pass < alpha, with no
// adjustment: the gate passes only when every case passes, and an intersection-union test (each
// case's "slower than the threshold" rejected at alpha) keeps the chance of passing a gate that
// has a slowed case below alpha without one (Berger 1982); Holm there would only turn passes into
// INCONCLUSIVE. Else INCONCLUSIVE. The interval reported is [exp(m - t_{1-a_r} se),
// exp(m + t_{1-alpha} se)] with a_r = alpha * p / p_adjusted, the level at which Holm tested that
// case, so that "REGRESSION" and "the whole interval lies above 1 + threshold" are the same
// statement (and PASS and "below"). Flagged cases get the lower bound at alpha / m and no effect
// on the exit code. Throws InvalidInput for a bad threshold or alpha, no gated case, fewer than
// kMinRounds rounds, or a ratio that is not finite and positive.
GateJudgement judge_rounds(const std::vector<CaseRounds>& cases, const GateSettings& settings);

// The fewest rounds n >= `from` with t_{1 - level, h - 1} * sd * sqrt(n) / h < distance (h the
// rounds kept after trimming n; distance and sd in log units), i.e. at which a one-sided interval
// at `level` would clear the threshold by the measured distance; none when distance <= 0 or
// beyond kMaxRoundsAdvised.
std::optional<std::size_t> rounds_to_resolve(double distance, double sd, double level,
                                             std::size_t from, double trim);

// The sample standard deviation over the mean of x (>= 2 values).
double coefficient_of_variation(const std::vector<double>& x);

// The sample standard deviation of log(ratio) over >= 2 ratios, each finite and > 0 (the
// caller's to check).
double log_ratio_spread(const std::vector<double>& ratios);

}  // namespace ropecheck
