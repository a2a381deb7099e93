// The fp32 recurrence's constants (kRecurrencePerPairUlps, kRecurrenceConstantUlps in
// core/tolerance.h) are tight for the formations they are derived for. theta_recurrence/scalar
// reaches only 0.24 of its bound: a correctly rounded powf errs by at most half an ulp and the
// products' roundings mostly cancel (docs/tolerance.md). The derivation admits a powf off by a
// whole ulp, the same way at every step, so the test forms its own table the way kernels that
// cache theta do, with such a theta_scale:
//   theta_0 = 1,  theta_(i+1) = theta_i * theta_scale,  angle = float(m) * (theta_i * float(1/factor))
// in fp32, every product rounded to nearest, theta_scale = powf's correctly rounded value one
// ulp lower (within an ulp of the exact power: what a powf off by its allowed ulp returns).
// Run: ctest --preset default -R BoundTightness
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/tolerance.h"
#include "tests/support/bound_tightness.h"

namespace ropecheck {
namespace {

// d 30, base 32219: theta_scale = 32219^(-1/15) = 0.5006, just over 0.5, where an ulp is nearly
// 2u of it; the fp32 exponent -2/30 is inexact and its rounding lowers theta_scale too, by about
// 0.6u; float(32219) is exact. So theta_scale is 2.6u low, of the (lambda + 2) u = 2.69u the
// derivation allows it, lambda = ln(32219)/15 = 0.69. Linear scaling by 15.915, whose float
// reciprocal is 0.98u low and whose product with theta_1 rounds down by nearly u too: the two
// scaling operations of the constant.
RopeSpec recurrence_spec() {
  RopeSpec spec{30, 30, 32219, Layout::interleaved, AnglePrecision::fp32_recurrence, {}, {}};
  spec.scaling.kind = ScalingKind::linear;
  spec.scaling.factor = 15.915;
  return spec;
}

float theta_scale_an_ulp_low(const RopeSpec& spec) {
  const float base = static_cast<float>(spec.base), exponent = -2.0f / static_cast<float>(spec.rotary_dim);
  const long double exact = std::pow(static_cast<long double>(base), static_cast<long double>(exponent));
  const float nearest = static_cast<float>(exact);
  const float low = std::nextafter(nearest, 0.0f);
  EXPECT_LT(low, exact);
  EXPECT_LT(exact - low, std::nextafter(nearest, 1.0f) - nearest) << "more than an ulp from the exact power";
  return low;
}

// The cached-theta recurrence above (pairs in order, then the scaling multiplier), per pair.
std::vector<float> scaled_thetas(const RopeSpec& spec) {
  const float theta_scale = theta_scale_an_ulp_low(spec);
  const auto scaling = static_cast<float>(1.0 / spec.scaling.factor);
  std::vector<float> scaled(static_cast<std::size_t>(spec.rotary_dim / 2));
  float theta = 1.0f;
  for (float& t : scaled) {
    t = theta * scaling;
    theta *= theta_scale;
  }
  return scaled;
}

test::TightRotation recurrence_rotation(const RopeSpec& spec) {
  return [scaled = scaled_thetas(spec)](const RopeSpec& s, HeadTensor x, PositionIds positions) {
    test::rotate_by_angles(s, x, positions, [&](std::int64_t m, int i) {
      return static_cast<float>(m) * scaled[static_cast<std::size_t>(i)];
    });
  };
}

// kRecurrencePerPairUlps: at pairs 10 to 14 the i steps are most of k_i = i (lambda + 3) + 4,
// each theta_scale's 2.6u of its 3.69u, and the angles (60 radians and more at positions near
// 2^24) make the angle term all of the bound.
TEST(BoundTightness, RecurrencePerPairUlpsForAPowfOffByAnUlp) {
  const RopeSpec spec = recurrence_spec();
  test::expect_tight("fp32 recurrence, pairs 10-14",
                     test::rope_sweep(recurrence_rotation(spec), StorageType::fp32, spec,
                                      test::positions_from((1 << 24) - 256 * 4099, 256, 4099), 4, 1.0f,
                                      test::rotation_bound_at(spec, [](int pair) { return pair >= 10; })));
}

// kRecurrenceConstantUlps: at pair 1, k_1 = lambda + 3 + 4 and the constant is more than half of
// it. theta_1 = theta_scale (2.6u low), times float(1/factor) (1u low, and the product rounds
// down by 0.97u), times float(m): positions near 8.34e6 put that product just over 2^18, where
// some of them round down by nearly u too.
TEST(BoundTightness, RecurrenceConstantUlpsAtTheFirstStep) {
  const RopeSpec spec = recurrence_spec();
  test::expect_tight("fp32 recurrence, pair 1",
                     test::rope_sweep(recurrence_rotation(spec), StorageType::fp32, spec,
                                      test::positions_from(8340000, 4096), 1, 1.0f,
                                      test::rotation_bound_at(spec, [](int pair) { return pair == 1; })));
}

}  // namespace
}  // namespace ropecheck
