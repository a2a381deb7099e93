// The scaled frequency table (frequency.h) for random specs of every scaling kind: against the
// oracle's independent long-double formulas, against the facts each method states, and HF's fp32
// formation of it against the tolerance model's fp32 angle term (tolerance.h). Published values
// are in scaling_reference_test.cc.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <limits>

#include "properties/harness/generators.h"
#include "core/errors.h"
#include "core/frequency.h"
#include "impls/oracle/oracle.h"
#include "core/tolerance.h"

namespace ropecheck {
namespace {

// A spec with `kind` and random dims, base and parameters.
RopeSpec scaled_spec(ScalingKind kind) {
  RopeSpec spec;
  spec.rotary_dim = 2 * *rc::gen::inRange(1, 129);
  spec.head_dim = spec.rotary_dim;
  spec.base = *rc::gen::element(10000.0, 500000.0, 1e6, 1234.5);
  spec.scaling = *scaling_of(kind, spec.rotary_dim);
  return spec;
}

rc::Gen<ScalingKind> any_kind() {
  return rc::gen::element(ScalingKind::none, ScalingKind::linear, ScalingKind::ntk,
                          ScalingKind::dynamic_ntk, ScalingKind::yarn, ScalingKind::llama3,
                          ScalingKind::longrope);
}

RopeSpec unscaled(RopeSpec spec) {
  spec.scaling = {};
  return spec;
}

RC_GTEST_PROP(ScalingTable, AgreesWithTheOracle, ()) {
  const RopeSpec spec = scaled_spec(*any_kind());
  const auto shared = inverse_frequencies(spec);
  const auto oracle = oracle_inverse_frequencies(spec);
  RC_ASSERT(shared.size() == oracle.size());
  for (std::size_t i = 0; i < shared.size(); ++i) {
    // pow, exp/log and a few divisions in double, each within an ulp or two, against long
    // double: 64 ulps leave room for the blends' cancellation and nothing for a wrong formula.
    const double truth = static_cast<double>(oracle[i]);
    RC_ASSERT(std::abs(shared[i] - truth) <= 64 * 0x1p-52 * truth);
  }
  const double a = attention_factor(spec);
  RC_ASSERT(std::abs(a - static_cast<double>(oracle_attention_factor(spec))) <= 4 * 0x1p-52 * a);
}

RC_GTEST_PROP(ScalingTable, EveryKindOnlyLowersFrequencies, ()) {
  const RopeSpec spec = scaled_spec(*any_kind());
  const auto theta = inverse_frequencies(spec);
  const auto plain = inverse_frequencies(unscaled(spec));
  for (std::size_t i = 0; i < theta.size(); ++i) {
    RC_ASSERT(theta[i] > 0.0);
    // LongRoPE divides by its factors (>= 1 here); the others interpolate or raise the base.
    RC_ASSERT(theta[i] <= plain[i] * (1 + 1e-15));
  }
}

RC_GTEST_PROP(ScalingTable, YarnAndLlama3StayBetweenInterpolationAndExtrapolation, ()) {
  const RopeSpec spec = scaled_spec(*rc::gen::element(ScalingKind::yarn, ScalingKind::llama3));
  const auto theta = inverse_frequencies(spec);
  const auto plain = inverse_frequencies(unscaled(spec));
  const double slack = 1e-15;
  double previous_ratio = 2.0;
  for (std::size_t i = 0; i < theta.size(); ++i) {
    RC_ASSERT(theta[i] >= plain[i] / spec.scaling.factor * (1 - slack));
    RC_ASSERT(theta[i] <= plain[i] * (1 + slack));
    // High frequencies are kept, low ones interpolated: the kept fraction never grows with i.
    const double ratio = theta[i] / plain[i];
    RC_ASSERT(ratio <= previous_ratio * (1 + slack));
    previous_ratio = ratio;
  }
}

RC_GTEST_PROP(ScalingTable, LinearDividesEveryFrequency, ()) {
  const RopeSpec spec = scaled_spec(ScalingKind::linear);
  const auto theta = inverse_frequencies(spec);
  const auto plain = inverse_frequencies(unscaled(spec));
  for (std::size_t i = 0; i < theta.size(); ++i) {
    RC_ASSERT(theta[i] == plain[i] / spec.scaling.factor);
  }
}

RC_GTEST_PROP(ScalingTable, NtkKeepsTheFirstAndDividesTheLastByTheFactor, ()) {
  const RopeSpec spec = scaled_spec(ScalingKind::ntk);
  RC_PRE(spec.rotary_dim > 2);
  const auto theta = inverse_frequencies(spec);
  const auto plain = inverse_frequencies(unscaled(spec));
  // base' = base s^(d/(d-2)): theta_0 = 1 still, and the lowest frequency
  // base'^(-(d-2)/d) = base^(-(d-2)/d) / s, the factor the context is stretched by.
  RC_ASSERT(theta.front() == 1.0);
  RC_ASSERT(std::abs(theta.back() * spec.scaling.factor / plain.back() - 1) <= 1e-13);
}

RC_GTEST_PROP(ScalingTable, DynamicNtkScalesOnlyPastTheOriginalLength, ()) {
  RopeSpec spec = scaled_spec(ScalingKind::dynamic_ntk);
  const auto plain = inverse_frequencies(unscaled(spec));
  spec.scaling.sequence_length = spec.scaling.original_max_position;
  RC_ASSERT(inverse_frequencies(spec) == plain);
  spec.scaling.sequence_length += 1;
  RopeSpec static_ntk = spec;
  static_ntk.scaling.kind = ScalingKind::ntk;
  const auto max_l = static_cast<double>(spec.scaling.original_max_position);
  static_ntk.scaling.factor = spec.scaling.factor * (max_l + 1) / max_l - (spec.scaling.factor - 1);
  const auto grown = inverse_frequencies(spec);
  const auto expected = inverse_frequencies(static_ntk);
  for (std::size_t i = 0; i < grown.size(); ++i) {
    RC_ASSERT(std::abs(grown[i] - expected[i]) <= 1e-14 * expected[i]);
  }
}

RC_GTEST_PROP(ScalingTable, LongRopeSwitchesFromShortToLongFactorsPastTheOriginalLength, ()) {
  RopeSpec spec = scaled_spec(ScalingKind::longrope);
  const auto plain = inverse_frequencies(unscaled(spec));
  for (const std::int64_t extra : {0, 1}) {
    spec.scaling.sequence_length = spec.scaling.original_max_position + extra;
    const auto& ext = extra == 0 ? spec.scaling.short_factor : spec.scaling.long_factor;
    const auto theta = inverse_frequencies(spec);
    for (std::size_t i = 0; i < theta.size(); ++i) RC_ASSERT(theta[i] == plain[i] / ext[i]);
  }
}

// HF's fp32 formation of the table is within what the tolerance model charges fp32 angles for
// it: relative (|ln theta_i| + 7) u for the table's part of the angle term, plus the blend term.
RC_GTEST_PROP(ScalingTable, HfFp32TableIsWithinTheFp32AngleModel, ()) {
  RopeSpec spec = scaled_spec(*any_kind());
  spec.angle_precision = AnglePrecision::fp32;
  const auto hf = inverse_frequencies_hf_fp32(spec);
  const auto oracle = oracle_inverse_frequencies(spec);
  const auto model = error_model(spec, StorageType::fp32);
  for (std::size_t i = 0; i < hf.size(); ++i) {
    const double truth = static_cast<double>(oracle[i]);
    const double relative = std::abs(static_cast<double>(hf[i]) - truth) / truth;
    // angle units per radian (in eps32 = 2u) minus the product's own u.
    const double allowed = (2 * (angle_units_per_radian(model, truth, static_cast<int>(i)) + model.blend_units) - 1) * kUnitRoundoff32;
    RC_ASSERT(relative <= allowed);
  }
}

TEST(ScalingValidation, BadParametersAreRefusedWithTheirName) {
  const auto refused = [](RopeScaling s, const char* needle) {
    RopeSpec spec;
    spec.scaling = std::move(s);
    try {
      validate(spec);
      ADD_FAILURE() << "accepted " << describe(spec);
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  const auto scaling = [](ScalingKind kind, double factor, std::int64_t original_max) {
    RopeScaling s;
    s.kind = kind;
    s.factor = factor;
    s.original_max_position = original_max;
    return s;
  };
  refused(scaling(ScalingKind::linear, 0.5, 0), "factor");
  refused(scaling(ScalingKind::linear, std::nan(""), 0), "factor");
  refused(scaling(ScalingKind::yarn, 4.0, 0), "original_max_position");
  RopeScaling yarn = scaling(ScalingKind::yarn, 4.0, 4096);
  yarn.beta_fast = 1.0;
  yarn.beta_slow = 32.0;
  refused(yarn, "beta_fast > beta_slow");
  RopeScaling llama = scaling(ScalingKind::llama3, 8.0, 8192);
  llama.high_freq_factor = 1.0;
  refused(llama, "high_freq_factor > low_freq_factor");
  RopeScaling longrope = scaling(ScalingKind::longrope, 2.0, 4096);
  longrope.short_factor.assign(3, 1.0);
  longrope.long_factor.assign(64, 1.0);
  refused(longrope, "short_factor must have rotary_dim/2 = 64 entries, got 3");
  longrope.short_factor.assign(64, 1.0);
  longrope.long_factor[5] = -1.0;
  refused(longrope, "long_factor[5]");
  RopeScaling scaled;
  scaled.attention_factor = 0.0;
  refused(scaled, "attention_factor");
  // DeepSeek's mscale keys: finite and >= 0 (HF checks neither, but a negative one can make the
  // attention factor zero, negative or infinite), and yarn's alone.
  RopeScaling deepseek = scaling(ScalingKind::yarn, 40.0, 4096);
  deepseek.mscale = std::nan("");
  deepseek.mscale_all_dim = 1.0;
  refused(deepseek, "yarn mscale must be finite and >= 0, got nan");
  deepseek.mscale = 1.0;
  deepseek.mscale_all_dim = -0.707;
  refused(deepseek, "yarn mscale_all_dim must be finite and >= 0, got -0.707");
  deepseek.mscale_all_dim = std::numeric_limits<double>::infinity();
  refused(deepseek, "mscale_all_dim");
  deepseek.mscale_all_dim = 0.0;  // HF's default path, as absent
  EXPECT_NO_THROW(validate(deepseek, 128));
  RopeScaling linear_with_mscale = scaling(ScalingKind::linear, 4.0, 0);
  linear_with_mscale.mscale = 1.0;
  refused(linear_with_mscale,
          "mscale is a yarn parameter (DeepSeek's rope_scaling), got it with linear scaling");
  EXPECT_THROW(parse_scaling_kind("ntk-by-parts"), InvalidInput);
  EXPECT_EQ(parse_scaling_kind("yarn"), ScalingKind::yarn);
}

// A counterexample's spec line names DeepSeek's keys where they are set, and only there.
TEST(ScalingDescription, YarnNamesMscaleWhereSet) {
  RopeScaling yarn;
  yarn.kind = ScalingKind::yarn;
  yarn.factor = 40;
  yarn.original_max_position = 4096;
  EXPECT_EQ(describe(yarn), "scaling=yarn factor=40 original_max=4096 beta_fast=32 beta_slow=1");
  yarn.mscale = 1.0;
  yarn.mscale_all_dim = 0.707;
  EXPECT_EQ(describe(yarn),
            "scaling=yarn factor=40 original_max=4096 beta_fast=32 beta_slow=1 mscale=1 mscale_all_dim=0.707");
  yarn.mscale.reset();
  EXPECT_EQ(describe(yarn),
            "scaling=yarn factor=40 original_max=4096 beta_fast=32 beta_slow=1 mscale_all_dim=0.707");
}

}  // namespace
}  // namespace ropecheck
