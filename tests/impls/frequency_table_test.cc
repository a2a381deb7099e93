// The shared frequency table theta_i = base^(-2i/rotary_dim) against the oracle's independent
// long-double computation (exp of a log instead of pow), and its shape.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "core/frequency.h"
#include "impls/oracle/oracle.h"

namespace ropecheck {
namespace {

TEST(FrequencyTable, AgreesWithTheOracleToAFewDoubleUlps) {
  for (double base : {100.0, 10000.0, 500000.0, 1e6, 12345.678}) {
    for (int r : {2, 4, 64, 80, 128, 256, 512}) {
      const RopeSpec spec{r, r, base, Layout::interleaved, AnglePrecision::fp64, {}, {}};
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
  const RopeSpec spec{128, 128, 10000.0, Layout::interleaved, AnglePrecision::fp64, {}, {}};
  const auto theta = inverse_frequencies(spec);
  EXPECT_EQ(theta.front(), 1.0);
  for (std::size_t i = 1; i < theta.size(); ++i) EXPECT_LT(theta[i], theta[i - 1]);
  EXPECT_NEAR(theta.back(), std::pow(10000.0, -126.0 / 128), 1e-18);
}

TEST(FrequencyTable, PartialRotaryUsesRotaryDimInTheExponent) {
  // HF: dim = head_dim * partial_rotary_factor; inv_freq = 1 / base^(arange(0, dim, 2) / dim).
  const RopeSpec spec{128, 32, 10000.0, Layout::half_split, AnglePrecision::fp32, {}, {}};
  const auto theta = inverse_frequencies(spec);
  ASSERT_EQ(theta.size(), 16u);
  EXPECT_NEAR(theta[1], std::pow(10000.0, -2.0 / 32), 1e-15);
  EXPECT_NEAR(theta.back(), std::pow(10000.0, -30.0 / 32), 1e-15);
}

// HF's llama3 bands compare `wavelen < high_freq_wavelen` and `wavelen > low_freq_wavelen`: a
// wavelength exactly on the high edge is medium, so smoothed, and smooth is not exactly 1 there
// in fp32 (1024 / wavelen rounds), so smoothed is not the kept frequency. Pair 1 of d 8, base 1e4:
// theta = 1 / 1e4^(2/8) = 0.1f; the high edge put on its wavelength.
TEST(FrequencyTable, Llama3WavelengthOnTheHighEdgeIsSmoothed) {
  const float theta = 1.0f / 10.0f;
  const float wavelen = 2.0f * std::numbers::pi_v<float> / theta;
  RopeScaling s;
  s.kind = ScalingKind::llama3;
  s.factor = 8.0;
  s.original_max_position = 1024;
  s.low_freq_factor = 1.0;
  s.high_freq_factor = 1024.0 / static_cast<double>(wavelen);
  const RopeSpec spec{8, 8, 10000.0, Layout::interleaved, AnglePrecision::fp32, s, {}};
  ASSERT_EQ(static_cast<float>(1024.0 / s.high_freq_factor), wavelen);
  const float smooth = (1024.0f / wavelen - 1.0f) / static_cast<float>(s.high_freq_factor - 1.0);
  ASSERT_NE(smooth, 1.0f);
  const float smoothed = (1.0f - smooth) * theta / 8.0f + smooth * theta;
  ASSERT_NE(smoothed, theta);
  EXPECT_EQ(inverse_frequencies_hf_fp32(spec)[1], smoothed);
}

}  // namespace
}  // namespace ropecheck
