// choose_measure() on known pilot ratios: the measure with the smaller spread of log ratios, ties
// to limit, time for a case without a probe, and bad pilots rejected.
//   build/tests/gate_tests --gtest_filter='MeasureChoice.*'
#include "gate/measure_choice.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/errors.h"

namespace ropecheck {
namespace {

// Ratios exp(+-d): log ratios +-d around 0, sample sd d * sqrt(n / (n - 1)) for n values.
std::vector<double> spread(double d, int n) {
  std::vector<double> r;
  for (int i = 0; i < n; ++i) r.push_back(std::exp(i % 2 == 0 ? d : -d));
  return r;
}

TEST(MeasureChoice, PicksTheMeasureWhoseLogRatiosSpreadLess) {
  const auto probe_noisy = choose_measure(spread(0.01, 4), spread(0.10, 4));
  EXPECT_EQ(probe_noisy.measure, GateMeasure::time);
  EXPECT_NEAR(probe_noisy.time_spread, 0.01 * std::sqrt(4.0 / 3), 1e-12);
  EXPECT_NEAR(probe_noisy.limit_spread, 0.10 * std::sqrt(4.0 / 3), 1e-12);
  EXPECT_EQ(choose_measure(spread(0.05, 4), spread(0.02, 4)).measure, GateMeasure::limit);
  // A common factor moves no spread: a ratio of 1.3 every round is as quiet as 1.0.
  EXPECT_EQ(choose_measure({1.3, 1.3, 1.3}, {1.0, 1.01, 0.99}).measure, GateMeasure::time);
}

TEST(MeasureChoice, TiesGoToLimitAndNoProbeMeansTime) {
  EXPECT_EQ(choose_measure(spread(0.03, 5), spread(0.03, 5)).measure, GateMeasure::limit);
  const auto no_probe = choose_measure(spread(0.5, 3), {});
  EXPECT_EQ(no_probe.measure, GateMeasure::time);
  EXPECT_TRUE(std::isnan(no_probe.limit_spread));
}

TEST(MeasureChoice, RejectsTooFewMismatchedOrBadRatios) {
  EXPECT_THROW(choose_measure({1.0, 1.1}, {1.0, 1.1}), InvalidInput);
  EXPECT_THROW(choose_measure(spread(0.01, 4), spread(0.01, 3)), InvalidInput);
  EXPECT_THROW(choose_measure({1.0, 0.0, 1.1}, {}), InvalidInput);
  EXPECT_THROW(choose_measure({1.0, 1.0, 1.1}, {1.0, NAN, 1.0}), InvalidInput);
}

TEST(MeasureChoice, RuleNamesAreTheCliWords) {
  EXPECT_EQ(to_string(MeasureRule::automatic), "auto");
  EXPECT_EQ(to_string(MeasureRule::limit), "limit");
  EXPECT_EQ(to_string(MeasureRule::time), "time");
}

}  // namespace
}  // namespace ropecheck
