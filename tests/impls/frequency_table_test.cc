// The shared frequency table theta_i = base^(-2i/rotary_dim) against the oracle's independent
// long-double computation (exp of a log instead of pow), and its shape.
#include <gtest/gtest.h>

#include <cmath>

#include "core/frequency.h"
#include "impls/oracle/oracle.h"

namespace ropecheck {
namespace {

TEST(FrequencyTable, AgreesWithTheOracleToAFewDoubleUlps) {
  for (double base : {100.0, 10000.0, 500000.0, 1e6, 12345.678}) {
    for (int r : {2, 4, 64, 80, 128, 256, 512}) {
      const RopeSpec spec{r, r, base, Layout::interleaved, AnglePrecision::fp64, {}};
      const auto shared = inverse_frequencies(spec);
      const auto oracle = oracle_inverse_frequencies(spec);
      ASSERT_EQ(shared.size(), static_cast<std::size_t>(r / 2));
      for (std::size_t i = 0; i < shared.size(); ++i) {
        // pow is within 1 ulp, the long double exp/log far closer: 4 ulps leave room for both.
        const double tolerance = 4 * std::numeric_limits<double>::epsilon() * static_cast<double>(oracle[i]);
        EXPECT_NEAR(shared[i], static_cast<double>(oracle[i]), tolerance)
            << "base " << base << " rotary_dim " << r << " i " << i;
      }
    }
  }
}

TEST(FrequencyTable, ShapeOfTheTable) {
  const RopeSpec spec{128, 128, 10000.0, Layout::interleaved, AnglePrecision::fp64, {}};
  const auto theta = inverse_frequencies(spec);
  EXPECT_EQ(theta.front(), 1.0);
  for (std::size_t i = 1; i < theta.size(); ++i) EXPECT_LT(theta[i], theta[i - 1]);
  EXPECT_NEAR(theta.back(), std::pow(10000.0, -126.0 / 128), 1e-18);
}

TEST(FrequencyTable, PartialRotaryUsesRotaryDimInTheExponent) {
  // HF: dim = head_dim * partial_rotary_factor; inv_freq = 1 / base^(arange(0, dim, 2) / dim).
  const RopeSpec spec{128, 32, 10000.0, Layout::half_split, AnglePrecision::fp32, {}};
  const auto theta = inverse_frequencies(spec);
  ASSERT_EQ(theta.size(), 16u);
  EXPECT_NEAR(theta[1], std::pow(10000.0, -2.0 / 32), 1e-15);
  EXPECT_NEAR(theta.back(), std::pow(10000.0, -30.0 / 32), 1e-15);
}

}  // namespace
}  // namespace ropecheck
