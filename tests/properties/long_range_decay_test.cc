// Seed 004's long-range decay statement, on the formula score(x) = 2 sum_i cos(x theta_i):
// it holds where the seed says decay holds and fails on each of the seed's counter-examples.
#include <gtest/gtest.h>

#include <cmath>

#include "properties/harness/long_range_decay.h"
#include "core/frequency.h"

namespace ropecheck {
namespace {

std::vector<double> llama_theta(int d) {
  RopeSpec spec;
  spec.head_dim = spec.rotary_dim = d;
  return inverse_frequencies(spec);
}

DecayVerdict verdict_for(const std::vector<double>& theta, int d) {
  const double bound = long_range_decay_bound(d);
  return long_range_decay(ones_score(theta, static_cast<std::int64_t>(bound)), bound);
}

TEST(LongRangeDecay, SeedBoundValues) {
  // Seed 004: d = 256 -> 14617; d = 4096 -> "about 1e4" (15707.96 * 10^(-8/4096) = 15637.5);
  // d = 4 -> 157 (the plotted range).
  EXPECT_NEAR(long_range_decay_bound(256), 14617, 1);
  EXPECT_NEAR(long_range_decay_bound(4096), 15637.5, 0.1);
  EXPECT_NEAR(long_range_decay_bound(4), 157.08, 0.01);
}

TEST(LongRangeDecay, ScoreAtZeroIsD) {
  for (int d : {4, 64, 256}) EXPECT_DOUBLE_EQ(ones_score(llama_theta(d), 0)[0], d);
}

class DecayHolds : public ::testing::TestWithParam<int> {};

TEST_P(DecayHolds, ForLlamaFrequencies) {
  const int d = GetParam();
  const auto v = verdict_for(llama_theta(d), d);
  EXPECT_TRUE(v.holds) << "d = " << d << ": " << v.reason;
  EXPECT_LE(v.margin, 1.0);
}

// 4096: the seed's own example (2048 frequencies, 14 windows).
INSTANTIATE_TEST_SUITE_P(SeedAndMeasured, DecayHolds, ::testing::Values(64, 128, 256, 4096));

TEST(LongRangeDecay, D64RisesOnceYetHolds) {
  // The seed's measured fact: the d = 64 envelope rises from [2048, 4096) to [4096, 8192); a
  // "monotone envelope" statement would call that a failure, ours does not.
  const auto v = verdict_for(llama_theta(64), 64);
  ASSERT_GE(v.window_max.size(), 13u);
  EXPECT_GT(v.window_max[12], v.window_max[11]);
  EXPECT_NEAR(v.window_max[11], 21.05, 0.2);
  EXPECT_NEAR(v.window_max[12], 21.1, 0.2);
  EXPECT_TRUE(v.holds) << v.reason;
}

TEST(LongRangeDecay, FailsForAllThetaZero) {
  // theta_i = 0: score is the constant d, no decay; caught by clause (b).
  const auto v = verdict_for(std::vector<double>(128, 0.0), 256);
  EXPECT_FALSE(v.holds);
  EXPECT_NE(v.reason.find("(b)"), std::string::npos) << v.reason;
}

TEST(LongRangeDecay, FailsForAllThetaOne) {
  // theta_i = 1: score = d cos x, periodic; the envelope climbs back to d.
  const auto v = verdict_for(std::vector<double>(128, 1.0), 256);
  EXPECT_FALSE(v.holds);
  EXPECT_NEAR(v.window_max.back(), 256, 0.01);
}

TEST(LongRangeDecay, FailsForD4) {
  // d = 4: the slowest period is about 628 > the bound 157, so the score just oscillates.
  const auto v = verdict_for(llama_theta(4), 4);
  EXPECT_FALSE(v.holds);
  EXPECT_NE(v.reason.find("(a)"), std::string::npos) << v.reason;
}

TEST(LongRangeDecay, LargerBaseLengthensLongestPeriod) {
  // Seed 004: raising the base lengthens the longest period 2 pi / theta_(d/2-1).
  RopeSpec spec;
  spec.head_dim = spec.rotary_dim = 128;
  const double period_1e4 = 2 * M_PI / inverse_frequencies(spec).back();
  spec.base = 5e5;
  const double period_5e5 = 2 * M_PI / inverse_frequencies(spec).back();
  EXPECT_GT(period_5e5, 40 * period_1e4);
}

TEST(LongRangeDecay, NeedsTwoWindows) {
  EXPECT_ANY_THROW(long_range_decay(std::vector<double>(3, 1.0), 1e9));
}

}  // namespace
}  // namespace ropecheck
