// blend_units (core/tolerance.cc) is tight for the formations it is derived for. The allowance is
// an absolute error per fp32 blend weight, for any formation of the weights: 3u for YaRN's ramp
// weight, (3 hf / (hf - lf) + 2) u for Llama 3's smooth factor. HF's formations err by a small
// part of that (docs/tolerance.md), so each test here forms its own fp32 table the frameworks'
// way with every weight inside the blend off by its allowance (the farthest float within it),
// the direction that raises theta, and rotates with it. At a pair whose extrapolated weight
// nearly vanishes the blended frequency is about theta/factor while the weight moves it by
// theta (1 - 1/factor) times its error: the error, factor - 1 times the weight's, is nearly all
// of the allowance.
// Run: ctest --preset default -R BoundTightness
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "core/frequency.h"
#include "core/tolerance.h"
#include "tests/support/bound_tightness.h"

namespace ropecheck {
namespace {

constexpr double kBlendU = 0x1p-24;  // fp32 unit roundoff

// The fp32 weight a formation within `allowance` (in u) of `exact` can return, at its far end
// upward: the largest float within the allowance.
float weight_off_by(double exact, double allowance) {
  auto w = static_cast<float>(exact + allowance * kBlendU);
  while (w - exact > allowance * kBlendU) w = std::nextafter(w, 0.0f);
  return w;
}

// Rotates with fp32 angles float(m) * theta_f, theta_f formed per pair by `table`.
test::TightRotation rotation_with_table(const std::vector<float>& table) {
  return [table](const RopeSpec& spec, HeadTensor x, PositionIds positions) {
    test::rotate_by_angles(spec, x, positions, [&](std::int64_t m, int i) {
      return static_cast<float>(m) * table[static_cast<std::size_t>(i)];
    });
  };
}

const auto kFarPositions = test::positions_from((1 << 24) - 64 * 4099, 64, 4099);

// YaRN at factor 64, ramp not truncated, beta_slow chosen so that the ramp ends 0.001 past pair
// 40: there HF's extrapolation weight 1 - ramp is 5e-5 and theta_40 is 1.003 theta/64. Table as
// HF forms it, interpolation (1 - w) + extrapolation w in fp32, from correctly rounded theta and
// theta/factor, with w off by 3u: 0.9 of the bound (the blend's 1.5 * 63 + 0.5 units
// per radian and the fp32-angle term's 8.5 beside it).
TEST(BoundTightness, YarnBlendUnitsForAWeightOffByItsAllowance) {
  RopeSpec spec{128, 128, 1e4, Layout::half_split, AnglePrecision::fp32, {}, {}};
  RopeScaling& s = spec.scaling;
  s.kind = ScalingKind::yarn;
  s.factor = 64;
  s.original_max_position = 4096;
  s.truncate = false;
  s.beta_slow = 4096 / (2 * std::numbers::pi) * std::pow(1e4, -2 * 40.001 / 128);
  s.attention_factor = 1.0;  // the attention factor's rounding has its own test
  const CorrectionRange range = yarn_correction_range(spec);
  ASSERT_GT(range.high - 40, 0.0009);
  ASSERT_LT(range.high - 40, 0.0011);
  std::vector<float> table(64);
  for (std::size_t i = 0; i < table.size(); ++i) {
    const double theta = std::pow(1e4, -2.0 * static_cast<double>(i) / 128);
    const double ramp = std::clamp((static_cast<double>(i) - range.low) / (range.high - range.low), 0.0, 1.0);
    const float extrapolation = static_cast<float>(theta), interpolation = static_cast<float>(theta / s.factor);
    const bool blended = ramp > 0 && ramp < 1;
    const float w = blended ? weight_off_by(1 - ramp, 3) : static_cast<float>(1 - ramp);
    table[i] = interpolation * (1.0f - w) + extrapolation * w;
  }
  const auto bound = test::rotation_bound(spec, StorageType::fp32);
  test::expect_tight("YaRN blend, weight off by 3u",
                     test::rope_sweep(rotation_with_table(table), StorageType::fp32, spec, kFarPositions, 4, 1.0f, bound));
}

// Llama 3 at factor 64, lf 1, hf 4, original_max_position the first integer past pair 40's
// wavelength: there smooth = (L / wavelen - lf) / (hf - lf) is under 2e-5. Table as HF forms it,
// (1 - smooth) * theta / factor + smooth * theta in fp32, with smooth off by
// (3 * 4 / 3 + 2) u = 6u: 0.95 of the bound ((1.5 * 4/3 + 1) * 63 + 0.5 units per radian and
// the fp32-angle term's 9.7).
TEST(BoundTightness, Llama3BlendUnitsForASmoothFactorOffByItsAllowance) {
  RopeSpec spec{128, 128, 5e5, Layout::half_split, AnglePrecision::fp32, {}, {}};
  RopeScaling& s = spec.scaling;
  s.kind = ScalingKind::llama3;
  s.factor = 64;
  s.low_freq_factor = 1;
  s.high_freq_factor = 4;
  const double wavelen_40 = 2 * std::numbers::pi / std::pow(5e5, -2.0 * 40 / 128);
  s.original_max_position = static_cast<std::int64_t>(std::ceil(wavelen_40));
  const double context = static_cast<double>(s.original_max_position);
  const double allowance = 3 * s.high_freq_factor / (s.high_freq_factor - s.low_freq_factor) + 2;
  std::vector<float> table(64);
  for (std::size_t i = 0; i < table.size(); ++i) {
    const double theta = std::pow(5e5, -2.0 * static_cast<double>(i) / 128);
    const double wavelen = 2 * std::numbers::pi / theta;
    const auto llama = static_cast<float>(theta);
    const auto factor = static_cast<float>(s.factor);
    if (wavelen < context / s.high_freq_factor) {
      table[i] = llama;
    } else if (wavelen > context / s.low_freq_factor) {
      table[i] = static_cast<float>(theta / s.factor);
    } else {
      const double smooth = (context / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
      if (i == 40) {
        EXPECT_LT(smooth, 2e-5);
      }
      const float w = weight_off_by(smooth, allowance);
      table[i] = (1.0f - w) * llama / factor + w * llama;
    }
  }
  const auto bound = test::rotation_bound(spec, StorageType::fp32);
  test::expect_tight("Llama 3 blend, smooth off by 6u",
                     test::rope_sweep(rotation_with_table(table), StorageType::fp32, spec, kFarPositions, 4, 1.0f, bound));
}

}  // namespace
}  // namespace ropecheck
