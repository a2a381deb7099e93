// The bounds of core/tolerance.h are tight: for each derived bound, a fixed sweep of a real
// implementation of its class (or a constructed worst case) reaches at least half of it and stays
// within it, so a bound doubled in the source fails here. docs/tolerance.md ("How tight each bound
// is") lists the fraction each reaches, and the bounds no correct implementation can reach to half.
// The recurrence, the blends and gamma32 have files of their own (*tightness_test.cc).
// Run: ctest --preset default -R BoundTightness
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/frequency.h"
#include "core/storage.h"
#include "core/tolerance.h"
#include "impls/oracle/oracle.h"
#include "impls/registry.h"
#include "impls/sinusoidal/absolute_encoding.h"
#include "tests/support/bound_tightness.h"

namespace ropecheck {
namespace {

using test::expect_tight;
using test::PairMeasure;
using test::positions_from;
using test::Reached;
using test::rope_sweep;
using test::rotation_bound;
using test::tight_rope_impl;

const SinusoidalImpl& tight_sinusoidal_impl(std::string_view id) {
  const SinusoidalImpl* impl = find_sinusoidal(id);
  if (impl == nullptr) throw std::logic_error(std::string(id) + " is not registered");
  return *impl;
}

// The sinusoidal table of `impl` at `positions` against the table in long double: the worst
// element error (eps32, absolute) over sinusoidal_bound_units, of the pairs whose exponent |a_i|
// = 2i ln(base) / d is at most max_exponent.
Reached sinusoidal_sweep(const SinusoidalImpl& impl, const SinusoidalSpec& spec,
                         const std::vector<std::int64_t>& positions,
                         double max_exponent = std::numeric_limits<double>::infinity()) {
  const auto pe = impl.table(spec, positions);
  const auto d = static_cast<std::size_t>(spec.d_model);
  std::vector<long double> w(d / 2);
  for (std::size_t i = 0; i < w.size(); ++i) {
    w[i] = std::pow(static_cast<long double>(spec.base), -2.0L * static_cast<long double>(i) / spec.d_model);
  }
  Reached worst;
  for (std::size_t t = 0; t < positions.size(); ++t) {
    for (int i = 0; i < spec.d_model / 2; ++i) {
      if (2.0 * i * std::log(spec.base) / spec.d_model > max_exponent) break;
      const long double angle = static_cast<long double>(positions[t]) * w[static_cast<std::size_t>(i)];
      const long double exact[] = {std::sin(angle), std::cos(angle)};
      const double limit =
          sinusoidal_bound_units(impl.angle_precision(), positions[t], i, spec.d_model, spec.base);
      for (std::size_t k = 0; k < 2; ++k) {
        const auto error = static_cast<double>(std::abs(pe[t * d + 2 * static_cast<std::size_t>(i) + k] - exact[k]));
        if (error / kEps32 / limit > worst.fraction) worst = {error / kEps32 / limit, positions[t], i};
      }
    }
  }
  return worst;
}

// kRoundingUnits. With theta_0 = 1 the positions 0..2^16 are 2^16 angles spread over the
// circle; with cos/sin correctly rounded (fp64 angles) the worst case is 1.35 of the 2 units
// (c = s = 1/sqrt(2), x_a = -x_b: the two rounded products and the rounded sum each off by
// nearly half an ulp, c and s by a quarter): a sweep this size finds more than 1.
TEST(BoundTightness, RoundingUnitsOfAnFp32Rotation) {
  const RopeSpec spec{2, 2, 1e4, Layout::interleaved, AnglePrecision::fp64, {}, {}};
  for (const char* id : {"rotation_matrix/scalar", "complex_multiply/scalar"}) {
    expect_tight(id, rope_sweep(tight_rope_impl(id), spec, positions_from(0, 1 << 16), 4, 1.0f,
                                rotation_bound(spec, StorageType::fp32)));
  }
}

// storage_rounding_units: one rounding to bf16 (fp16) is half a storage ulp, 2^-8 (2^-11) of a
// result whose mantissa is near 1; a pair whose rotated element carries nearly all its norm
// and lands near a rounding midpoint reaches the whole 2^15 (2^12) units. And below fp16's
// smallest normal (pairs of 2^-20) the rounding is absolute, half a subnormal step: measured in
// units of the unit_pair_norm floor 2^-14 / a, it reaches the same 2^12 units.
TEST(BoundTightness, StorageRoundingUnitsAndTheSubnormalFloor) {
  const RopeSpec spec{64, 64, 1e4, Layout::interleaved, AnglePrecision::fp64, {}, {}};
  for (const char* id : {"kernel_bf16/scalar", "kernel_fp16/scalar"}) {
    const RopeImpl& impl = tight_rope_impl(id);
    const auto bound = rotation_bound(spec, impl.capabilities().storage);
    expect_tight(id, rope_sweep(impl, spec, positions_from(0, 64), 4, 1.0f, bound));
    if (impl.capabilities().storage == StorageType::fp16) {
      expect_tight(std::string(id) + " subnormal pairs", rope_sweep(impl, spec, positions_from(0, 64), 4, 0x1p-20f, bound));
    }
  }
}

// norm_bound_units' sqrt(2), a sqrt(2) (rounding units + storage units): with storage rounding,
// the rounded element of a pair that carries nearly all its norm moves the norm by nearly the
// whole storage units, 1/sqrt(2) of the bound (both elements off outward do no better).
TEST(BoundTightness, NormBoundWithStorage) {
  const RopeSpec spec{64, 64, 1e4, Layout::interleaved, AnglePrecision::fp64, {}, {}};
  for (const char* id : {"kernel_bf16/scalar", "kernel_fp16/scalar"}) {
    const RopeImpl& impl = tight_rope_impl(id);
    const ErrorModel model = error_model(spec, impl.capabilities().storage);
    expect_tight(id, rope_sweep(impl, spec, positions_from(0, 64), 4, 1.0f,
                                [&](std::int64_t, double, int) { return norm_bound_units(model); },
                                PairMeasure::norm_change));
  }
}

// kNormBoundUnits, sqrt(2) * 2: the fp32 error vector's bound, what the attention and
// multi-head bounds build on. For normal results the vector is bounded by the element's 1.91
// (each term of it bounds a vector's norm too), but where the results are subnormal each
// element's roundings are absolute, 2^-150 each whatever the value, and the two elements' errors
// add in quadrature: pairs of norm ~2^-126 (errors in units of eps32 * 2^-126, unit_pair_norm's
// fp32 floor) reach it.
TEST(BoundTightness, NormBoundUnitsOfAnFp32Rotation) {
  const RopeSpec spec{2, 2, 1e4, Layout::interleaved, AnglePrecision::fp64, {}, {}};
  expect_tight("rotation_matrix/scalar",
               rope_sweep(tight_rope_impl("rotation_matrix/scalar"), spec, positions_from(0, 1 << 16), 4, 0x1p-126f,
                          [](std::int64_t, double, int) { return kNormBoundUnits; }, PairMeasure::error_vector));
}

// angle_units_per_radian for fp32 angles: |ln theta_i| / 2 + kFp32AngleUnits. HF's table
// 1 / powf(base, 2i/d) at d = 170: 2i/d is inexact, and at pair 43 (|ln theta| 4.7) its rounding,
// nearly half an ulp of a mantissa near 1, moves theta by nearly |ln theta| u, aligned with
// powf's and the reciprocal's roundings: the table alone is off by more than 0.45 of the
// per-radian allowance. Positions near 2^24 make the angle term all of the bound, and the
// product float(m) * theta_i's own rounding (u) aligns at some of them.
TEST(BoundTightness, Fp32AngleUnits) {
  const RopeSpec spec{170, 170, 1e4, Layout::half_split, AnglePrecision::fp32, {}, {}};
  expect_tight("hf_transformers/scalar",
               rope_sweep(tight_rope_impl("hf_transformers/scalar"), spec,
                          positions_from((1 << 24) - 2048 * 4099, 2048, 4099), 4, 1.0f,
                          rotation_bound(spec, StorageType::fp32)));
}

// kFp32AttentionScalingUnits: HF multiplies fp32 cos/sin by float(a). An attention factor just
// under a rounding midpoint of fp32 (1 + 5.499 * 2^-23) makes float(a) off by a whole u, then the
// product adds its own; at positions 1, 2 the high pairs' angles are ~1e-4, so the angle term is
// nearly nothing and the bound is a (2 + 1.5).
TEST(BoundTightness, Fp32AttentionScalingUnits) {
  RopeSpec spec{128, 128, 1e4, Layout::half_split, AnglePrecision::fp32, {}, {}};
  spec.scaling.kind = ScalingKind::yarn;
  spec.scaling.factor = 2;
  spec.scaling.original_max_position = 4096;
  spec.scaling.attention_factor = 1 + 5.499 * 0x1p-23;
  expect_tight("hf_transformers/scalar",
               rope_sweep(tight_rope_impl("hf_transformers/scalar"), spec, positions_from(1, 2), 1024,
                          1.0f, rotation_bound(spec, StorageType::fp32)));
}

// kSinusoidalFp64Units: a value in [0.5, 1) rounded once to fp32 is off by up to 2^-25, the
// whole 0.25 eps32; a table of 256 rows has values as close to a rounding midpoint as that.
TEST(BoundTightness, SinusoidalFp64) {
  expect_tight("sinusoidal/formula",
               sinusoidal_sweep(tight_sinusoidal_impl("sinusoidal/formula"), {512, 1e4}, positions_from(0, 256)));
}

// The fp32 div_term's angle term, (|a_i| + 1.5) per radian: at base 1e9, d 512, fl(-ln(base)/d)
// is off by nearly u and 2i times it by nearly u more, aligned at pair 99 (|a_i| 8.0), so w_i is
// off by nearly 2 |a_i| u of the allowed (2 |a_i| + 3) u; positions past 2^16 make the angle
// term nearly all of the bound.
TEST(BoundTightness, SinusoidalFp32AngleUnits) {
  expect_tight("sinusoidal/div_term",
               sinusoidal_sweep(tight_sinusoidal_impl("sinusoidal/div_term"), {512, 1e9},
                                positions_from(1 << 16, 512, 997)));
}

// The same term's 1.5 per radian (expf's ulp, 2u, and the product's rounding, u): it is most of
// the allowance at the pairs whose |a_i| is at most 1.5. At base 1e7, d 384 pair 15 (|a_i| 1.26)
// expf's result is off by nearly u, and at some positions past 2^14 the product's rounding and
// the angle's cosine align with it.
TEST(BoundTightness, SinusoidalFp32AngleUnitsAtLowPairs) {
  expect_tight("sinusoidal/div_term",
               sinusoidal_sweep(tight_sinusoidal_impl("sinusoidal/div_term"), {384, 1e7},
                                positions_from(1 << 14, 2048, 8000), 1.5));
}

// kSinusoidalFp32RoundingUnits, 0.5: one ulp of a value in [0.5, 1), what the model allows sinf
// and cosf. A correctly rounded sinf/cosf (glibc's are, in this range) is off by half of it at
// most, so no correct implementation gets over 0.5 of it: at base 1e9, d 64 the high pairs'
// angles are ~1e-6 for positions up to 4096, the bound is 0.5 and a few thousandths, and the
// cosines just under 1 are rounded by up to half an ulp: 0.496. What is asserted is that it is
// reached to within the angle term's share (0.45); doubled, the fraction would be under 0.25.
TEST(BoundTightness, SinusoidalFp32RoundingUnits) {
  expect_tight("sinusoidal/div_term",
               sinusoidal_sweep(tight_sinusoidal_impl("sinusoidal/div_term"), {64, 1e9}, positions_from(1, 4096)),
               0.45);
}

// What the real implementations of the recurrence and blend classes reach (docs/tolerance.md says
// why it is under half; recurrence_ and blend_tightness_test.cc reach it with formations the
// derivations admit): kept, and recorded (in the test's XML) so that the docs replay.
TEST(BoundTightness, LooseBoundsAreKeptAndMeasured) {
  const auto record = [](const std::string& what, const Reached& r) {
    ::testing::Test::RecordProperty(what, std::to_string(r.fraction));
    EXPECT_LE(r.fraction, 1.0) << what << ": over its bound at m " << r.position << " pair " << r.pair;
    EXPECT_GT(r.fraction, 0.0) << what << ": measured nothing";
  };
  const auto far = positions_from(1 << 20, 32, 491520);
  {
    const RopeSpec spec{128, 128, 1e4, Layout::interleaved, AnglePrecision::fp32_recurrence, {}, {}};
    record("fp32 recurrence theta_recurrence/scalar",
           rope_sweep(tight_rope_impl("theta_recurrence/scalar"), spec, far, 8, 1.0f,
                      rotation_bound(spec, StorageType::fp32)));
  }
  // Factor 64: the blend's allowance is ~95 of the ~100 units per radian of the blended pairs.
  RopeSpec yarn{128, 128, 1e4, Layout::half_split, AnglePrecision::fp32, {}, {}};
  yarn.scaling.kind = ScalingKind::yarn;
  yarn.scaling.factor = 64;
  yarn.scaling.original_max_position = 4096;
  record("YaRN blend hf_transformers/scalar",
         rope_sweep(tight_rope_impl("hf_transformers/scalar"), yarn, far, 8, 1.0f, rotation_bound(yarn, StorageType::fp32)));
  RopeSpec llama3{128, 128, 5e5, Layout::half_split, AnglePrecision::fp32, {}, {}};
  llama3.scaling.kind = ScalingKind::llama3;
  llama3.scaling.factor = 64;
  llama3.scaling.original_max_position = 8192;
  record("Llama 3 blend hf_transformers/scalar",
         rope_sweep(tight_rope_impl("hf_transformers/scalar"), llama3, far, 8, 1.0f, rotation_bound(llama3, StorageType::fp32)));
}

}  // namespace
}  // namespace ropecheck
