// The gate's statistics on known values: Student t against tables, the paired interval on log
// ratios by hand (plain and trimmed), Holm across cases on the regression side and none on the
// pass side, INCONCLUSIVE with the rounds that would resolve it, flagged
// cases outside the family, the exit codes, and (RapidCheck) that a verdict and its interval
// always say the same thing.
//   build/tests/gate_tests --gtest_filter='GateRule.*:GateBudget.*:StudentT.*'
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <vector>

#include "core/errors.h"
#include "core/exit_codes.h"
#include "gate/gate.h"
#include "gate/gate_rule.h"
#include "gate/student_t.h"

namespace ropecheck {
namespace {

// Ratios whose logs are exactly `logs`.
std::vector<double> from_logs(const std::vector<double>& logs) {
  std::vector<double> r;
  for (const double y : logs) r.push_back(std::exp(y));
  return r;
}

TEST(StudentT, QuantilesMatchTheTables) {
  EXPECT_NEAR(student_t_quantile(0.975, 9), 2.262157, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.95, 4), 2.131847, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.995, 2), 9.924843, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.995, 9), 3.249836, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.99, 19), 2.539483, 1e-6);
  EXPECT_NEAR(student_t_quantile(0.05, 4), -2.131847, 1e-6);
}

TEST(StudentT, CdfClosedFormsForOneAndTwoDegrees) {
  EXPECT_DOUBLE_EQ(student_t_cdf(0, 7), 0.5);
  EXPECT_NEAR(student_t_cdf(1, 1), 0.75, 1e-15);                         // Cauchy
  EXPECT_NEAR(student_t_cdf(1, 2), 0.5 + 1 / (2 * std::sqrt(3.0)), 1e-15);  // t/(2 sqrt(2+t^2))
  EXPECT_NEAR(student_t_cdf(-1, 2), 0.5 - 1 / (2 * std::sqrt(3.0)), 1e-15);
  EXPECT_EQ(student_t_cdf(INFINITY, 3), 1);
  EXPECT_THROW(student_t_cdf(1, 0), std::invalid_argument);
  EXPECT_THROW(student_t_quantile(1, 3), std::invalid_argument);
}

TEST(GateRule, PairedIntervalOnLogRatiosByHand) {
  // logs 0.10 +- {0, .02, -.02, .01, -.01}: mean 0.10, sd sqrt(0.001 / 4), se sd / sqrt(5).
  const auto j = judge_rounds({{"a", from_logs({0.10, 0.12, 0.08, 0.11, 0.09}), ""}}, {5, 0.05, 0});
  const CaseVerdict& v = j.cases.at(0);
  const double se = std::sqrt(0.001 / 4) / std::sqrt(5.0), t = 2.131847;  // t_{0.95, 4}
  EXPECT_NEAR(v.ratio, std::exp(0.10), 1e-12);
  // One case: Holm's level is alpha itself on each side.
  EXPECT_NEAR(v.ratio_low, std::exp(0.10 - t * se), 1e-6);
  EXPECT_NEAR(v.ratio_high, std::exp(0.10 + t * se), 1e-6);
  EXPECT_EQ(v.verdict, GateVerdict::regression);
  EXPECT_EQ(j.exit_code, kExitFailed);
  EXPECT_NEAR(v.p_regression, 1 - student_t_cdf((0.10 - std::log(1.05)) / se, 4), 1e-12);
  EXPECT_NEAR(v.p_regression + v.p_pass, 1, 1e-12);
  // Noise: the CV of the ratios themselves (close to the sd of the logs, 1.58%).
  EXPECT_NEAR(v.noise_percent, 1.58, 0.02);
}

TEST(GateRule, ThePassSideIsTheMirror) {
  const auto j = judge_rounds({{"a", from_logs({0.00, 0.02, -0.02, 0.01, -0.01}), ""}}, {5, 0.05, 0});
  EXPECT_EQ(j.cases[0].verdict, GateVerdict::pass);
  EXPECT_LT(j.cases[0].ratio_high, 1.05);
  EXPECT_EQ(j.exit_code, kExitOk);
}

TEST(GateRule, StraddlingTheThresholdIsInconclusiveWithTheRoundsThatWouldResolveIt) {
  // Mean log 0.02 (2% slower), sd 0.05: at K = 4 the interval reaches past log(1.05).
  const std::vector<double> logs = {0.02 - 0.05, 0.02 + 0.05, 0.02 - 0.05, 0.02 + 0.05};
  const auto j = judge_rounds({{"a", from_logs(logs), ""}}, {5, 0.05, 0});
  const CaseVerdict& v = j.cases[0];
  EXPECT_EQ(v.verdict, GateVerdict::inconclusive);
  EXPECT_EQ(j.exit_code, kExitInconclusive);
  EXPECT_LT(v.ratio_low, 1.05);
  EXPECT_GT(v.ratio_high, 1.05);
  // sd = sqrt(4 * 0.0025 / 3); the rounds n with t_{0.95, n-1} sd / sqrt(n) < log(1.05) - 0.02.
  const double sd = std::sqrt(0.01 / 3), distance = std::log(1.05) - 0.02;
  ASSERT_TRUE(v.rounds_needed.has_value());
  const auto n = static_cast<double>(*v.rounds_needed);
  EXPECT_LT(student_t_quantile(0.95, static_cast<int>(n) - 1) * sd / std::sqrt(n), distance);
  EXPECT_GE(student_t_quantile(0.95, static_cast<int>(n) - 2) * sd / std::sqrt(n - 1), distance);
  // At these rounds it would pass with a threshold above its upper bound at alpha / m.
  EXPECT_NEAR(v.threshold_to_pass_percent,
              100 * std::expm1(0.02 + student_t_quantile(0.95, 3) * sd / 2), 1e-9);
}

TEST(GateRule, RoundsToResolveByHand) {
  // distance = sd: t_{0.95, n-1} / sqrt(n) < 1 first at n = 5 (2.353 / 2 = 1.18; 2.132 / 2.236 = 0.95).
  EXPECT_EQ(rounds_to_resolve(0.05, 0.05, 0.05, 3, 0), 5u);
  EXPECT_EQ(rounds_to_resolve(0.05, 0.05, 0.05, 7, 0), 7u);  // never fewer than asked from
  EXPECT_FALSE(rounds_to_resolve(0, 0.05, 0.05, 3, 0).has_value());       // on the threshold
  EXPECT_FALSE(rounds_to_resolve(1e-6, 0.05, 0.05, 3, 0).has_value());    // beyond 1000 rounds
}

TEST(GateRule, HolmAcrossCasesTightensTheLevel) {
  // Alone, case b's interval clears the threshold at alpha; beside a noisy case that Holm does not
  // reject first, b is tested at alpha / 2 and its interval widens across the threshold.
  // t = (0.0658 - log 1.05) / (sd / sqrt 5) = 2.40: one-sided p ~ 0.037, in (0.025, 0.05).
  const auto b = from_logs({0.0658, 0.0858, 0.0458, 0.0758, 0.0558});
  EXPECT_EQ(judge_rounds({{"b", b, ""}}, {5, 0.05, 0}).cases[0].verdict, GateVerdict::regression);
  const auto noisy = from_logs({0.3, -0.3, 0.2, -0.2, 0.0});
  const auto j = judge_rounds({{"b", b, ""}, {"noisy", noisy, ""}}, {5, 0.05, 0});
  EXPECT_EQ(j.gated, 2u);
  EXPECT_GT(j.cases[0].p_regression_adjusted, j.cases[0].p_regression);
  EXPECT_NEAR(j.cases[0].p_regression_adjusted, 2 * j.cases[0].p_regression, 1e-12);
  EXPECT_EQ(j.cases[0].verdict, GateVerdict::inconclusive);
  // A flagged case is reported but is not in the family: b is judged as if alone.
  const auto f = judge_rounds({{"b", b, ""}, {"noisy", noisy, "working set near L3"}}, {5, 0.05, 0});
  EXPECT_EQ(f.gated, 1u);
  EXPECT_EQ(f.cases[0].verdict, GateVerdict::regression);
  EXPECT_EQ(f.cases[1].verdict, GateVerdict::flagged);
}

TEST(GateRule, ThePassSideIsNotAdjustedForTheOtherCases) {
  // The mirror of case b above: alone, p_pass ~ 0.037, in (alpha / 2, alpha). Beside a noisy case
  // it still passes at alpha (intersection-union: the gate passes only if every case does), and
  // its upper bound stays at t_{0.95, 4}.
  const auto b = from_logs({0.0318, 0.0118, 0.0518, 0.0218, 0.0418});
  const auto noisy = from_logs({0.3, -0.3, 0.2, -0.2, 0.0});
  const auto alone = judge_rounds({{"b", b, ""}}, {5, 0.05, 0}).cases[0];
  const auto j = judge_rounds({{"b", b, ""}, {"noisy", noisy, ""}}, {5, 0.05, 0});
  EXPECT_GT(j.cases[0].p_pass, 0.025);
  EXPECT_LT(j.cases[0].p_pass, 0.05);
  EXPECT_EQ(j.cases[0].verdict, GateVerdict::pass);
  EXPECT_DOUBLE_EQ(j.cases[0].ratio_high, alone.ratio_high);
  const double se = std::sqrt(0.001 / 4) / std::sqrt(5.0);
  EXPECT_NEAR(j.cases[0].ratio_high, std::exp(0.0318 + 2.131847 * se), 1e-6);
  EXPECT_EQ(j.cases[1].verdict, GateVerdict::inconclusive);
  EXPECT_EQ(j.exit_code, kExitInconclusive);  // one case unresolved: the gate does not pass
}

TEST(GateRule, TrimmedIntervalByHand) {
  // 10 rounds, trim 0.2: g = 2 dropped from each end, h = 6 kept. Sorted logs: -0.30 (a process
  // that ran 1.35x fast), -0.02, -0.01, 0, 0, 0.01, 0.01, 0.02, 0.03, 0.40 (one 1.5x slow).
  const std::vector<double> logs = {0.01, -0.30, 0.0, 0.02, 0.40, -0.01, 0.01, -0.02, 0.0, 0.03};
  const auto j = judge_rounds({{"a", from_logs(logs), ""}}, {5, 0.05, 0.2});
  const CaseVerdict& v = j.cases[0];
  const double kept_mean = (-0.01 + 0 + 0 + 0.01 + 0.01 + 0.02) / 6;  // 0.005
  // Winsorized: -0.30 and -0.02 become -0.01; 0.03 and 0.40 become 0.02.
  const std::vector<double> w = {-0.01, -0.01, -0.01, 0, 0, 0.01, 0.01, 0.02, 0.02, 0.02};
  double wm = 0, squares = 0;
  for (const double x : w) wm += x / 10;
  for (const double x : w) squares += (x - wm) * (x - wm);
  const double se = std::sqrt(squares / 9) * std::sqrt(10.0) / 6, t = 2.015048;  // t_{0.95, 5}
  EXPECT_NEAR(v.ratio, std::exp(kept_mean), 1e-12);
  EXPECT_NEAR(v.ratio_high, std::exp(kept_mean + t * se), 1e-6);
  EXPECT_NEAR(v.ratio_low, std::exp(kept_mean - t * se), 1e-6);
  EXPECT_NEAR(v.p_pass, student_t_cdf((kept_mean - std::log(1.05)) / se, 5), 1e-12);
  EXPECT_EQ(v.verdict, GateVerdict::pass);
  // The plain t on the same rounds: the two processes of their own make it unresolvable.
  const auto plain = judge_rounds({{"a", from_logs(logs), ""}}, {5, 0.05, 0});
  EXPECT_EQ(plain.cases[0].verdict, GateVerdict::inconclusive);
}

TEST(GateRule, TrimmingKeepsARealShiftOfEveryRound) {
  // Every round 10% slower, two of them wildly: trimmed, still a REGRESSION.
  std::vector<double> logs = {0.10, 0.09, 0.11, 0.10, 0.095, 0.105, 0.10, 0.09, 0.11, 0.10};
  logs[3] = 0.6;
  logs[7] = -0.4;
  const auto j = judge_rounds({{"a", from_logs(logs), ""}}, {5, 0.05, 0.2});
  EXPECT_EQ(j.cases[0].verdict, GateVerdict::regression);
  EXPECT_GT(j.cases[0].ratio_low, 1.05);
  EXPECT_EQ(judge_rounds({{"a", from_logs(logs), ""}}, {5, 0.05, 0}).cases[0].verdict,
            GateVerdict::inconclusive);
}

TEST(GateRule, RoundsToResolveCountsTheTrimmedRounds) {
  // trim 0.2 from n = 5 keeps 3 (df 2): t_{0.95, 2} sqrt(5) / 3 = 2.12 > 1, so more rounds than
  // the plain t's 5 at distance = sd.
  const auto n = rounds_to_resolve(0.05, 0.05, 0.05, 3, 0.2);
  ASSERT_TRUE(n.has_value());
  EXPECT_GT(*n, 5u);
  const std::size_t h = *n - 2 * static_cast<std::size_t>(0.2 * static_cast<double>(*n));
  EXPECT_LT(student_t_quantile(0.95, static_cast<int>(h) - 1) * std::sqrt(static_cast<double>(*n)) /
                static_cast<double>(h), 1.0);
}

TEST(GateRule, RegressionWinsOverInconclusiveInTheExitCode) {
  const auto j = judge_rounds({{"slow", from_logs({0.4, 0.41, 0.39}), ""},
                               {"noisy", from_logs({0.3, -0.3, 0.0}), ""}},
                              {5, 0.05, 0});
  EXPECT_EQ(j.regressions, 1u);
  EXPECT_EQ(j.inconclusive, 1u);
  EXPECT_EQ(j.exit_code, kExitFailed);
}

TEST(GateRule, ZeroNoiseIsAPoint) {
  const auto j = judge_rounds({{"a", {1.2, 1.2, 1.2}, ""}, {"b", {0.9, 0.9, 0.9}, ""}}, {5, 0.05, 0});
  EXPECT_EQ(j.cases[0].verdict, GateVerdict::regression);
  EXPECT_DOUBLE_EQ(j.cases[0].ratio_low, 1.2);
  EXPECT_EQ(j.cases[1].verdict, GateVerdict::pass);
}

TEST(GateRule, BadInputIsInvalidInput) {
  const std::vector<double> ok = {1, 1.01, 0.99};
  EXPECT_THROW(judge_rounds({{"a", {1, 1}, ""}}, {5, 0.05, 0}), InvalidInput);  // 2 rounds
  EXPECT_THROW(judge_rounds({{"a", {1, 0, 1}, ""}}, {5, 0.05, 0}), InvalidInput);
  EXPECT_THROW(judge_rounds({{"a", {1, NAN, 1}, ""}}, {5, 0.05, 0}), InvalidInput);
  EXPECT_THROW(judge_rounds({{"a", ok, "flagged"}}, {5, 0.05, 0}), InvalidInput);  // none gated
  EXPECT_THROW(judge_rounds({}, {5, 0.05, 0}), InvalidInput);
  EXPECT_THROW(judge_rounds({{"a", ok, ""}}, {0, 0.05}), InvalidInput);
  EXPECT_THROW(judge_rounds({{"a", ok, ""}}, {5, 1}), InvalidInput);
  EXPECT_THROW(judge_rounds({{"a", ok, ""}}, {5, 0.05, 0.3}), InvalidInput);  // trim > 0.25
  EXPECT_THROW(judge_rounds({{"a", ok, ""}}, {5, 0.05, -0.1}), InvalidInput);
}

TEST(GateBudget, MoreRoundsOnlyWhileInconclusiveWithoutRegressionAndWithinTheBudget) {
  GateJudgement inconclusive;
  inconclusive.inconclusive = 1;
  EXPECT_TRUE(worth_more_rounds(inconclusive, 100, 10, 120));    // 100 + 2 x 10 <= 120
  EXPECT_FALSE(worth_more_rounds(inconclusive, 101, 10, 120));   // the pair would overrun
  EXPECT_FALSE(worth_more_rounds(inconclusive, 10, 10, 0));      // no budget: exactly K rounds
  GateJudgement settled;
  settled.passed = 3;
  EXPECT_FALSE(worth_more_rounds(settled, 10, 10, 300));
  GateJudgement regressed = inconclusive;
  regressed.regressions = 1;
  EXPECT_FALSE(worth_more_rounds(regressed, 10, 10, 300));
}

// Whatever the ratios, REGRESSION is exactly "the interval lies above 1 + threshold" and PASS
// exactly "below": the interval shown is the one Holm tested.
RC_GTEST_PROP(GateRule, VerdictAndIntervalAgree, ()) {
  const auto cases = *rc::gen::inRange<std::size_t>(1, 6);
  const auto rounds = *rc::gen::inRange<std::size_t>(3, 12);
  std::vector<CaseRounds> input;
  for (std::size_t c = 0; c < cases; ++c) {
    const double shift = *rc::gen::inRange(-200, 400) / 1000.0;
    const double spread = *rc::gen::inRange(1, 150) / 1000.0;
    std::vector<double> logs;
    for (std::size_t r = 0; r < rounds; ++r) logs.push_back(shift + spread * (*rc::gen::inRange(-1000, 1000) / 1000.0));
    input.push_back({"c" + std::to_string(c), from_logs(logs), ""});
  }
  const GateSettings settings{5, 0.05, 0.2};
  for (const auto& v : judge_rounds(input, settings).cases) {
    const double limit = 1.05;
    RC_ASSERT((v.verdict == GateVerdict::regression) == (v.ratio_low > limit * (1 + 1e-12)) ||
              std::abs(v.ratio_low - limit) < 1e-9);
    RC_ASSERT((v.verdict == GateVerdict::pass) == (v.ratio_high < limit * (1 - 1e-12)) ||
              std::abs(v.ratio_high - limit) < 1e-9);
    RC_ASSERT(v.ratio_low <= v.ratio && v.ratio <= v.ratio_high);
  }
}

}  // namespace
}  // namespace ropecheck
