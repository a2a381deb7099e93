// RapidCheck generators for what RapidCheck lacks: finite floats across many decades, RoPE specs
// within an implementation's capabilities, and position sets as models see them (decode offsets,
// sorted with gaps, repeated, negative). Every generator shrinks towards the simplest case:
// 1.0f, head_dim 2, base 10000, position 0.
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <ostream>
#include <vector>

#include "impls/rope_impl.h"
#include "core/spec.h"

namespace ropecheck {

// Largest |position| generated: 2^20 (1M-token contexts), leaving room below kMaxAbsPosition
// for sums m + n + c in the relative-position and composition properties.
inline constexpr std::int64_t kMaxGeneratedPosition = std::int64_t{1} << 20;

// +-0 and +-(1 + f) * 2^e for e in [min_exponent, max_exponent], shrinking to 1.0f. The default
// |e| <= 40 (about 1e-12 .. 1e12) is wide, yet every product with a cos/sin >= 1e-12 stays a
// normal float, so the relative error model of tolerance.h holds.
inline constexpr int kMinFiniteExponent = -40;
inline constexpr int kMaxFiniteExponent = 40;
rc::Gen<float> finite_float(int min_exponent = kMinFiniteExponent, int max_exponent = kMaxFiniteExponent);

// fp16 inputs: from 2^-25 (below it everything rounds to 0) through the subnormals (where the
// storage rounding is absolute: tolerance.h's unit_pair_norm) up to 2^13 (values < 2^14), so
// that no rotation overflows: |y| <= a |p| <= 2 * sqrt(2) * 2^14 < 65504 (a <= 2 here).
inline constexpr int kFp16MinExponent = -25;
inline constexpr int kFp16MaxExponent = 13;

// What an implementation storing `storage` is given, before the rounding to it: finite_float()
// for fp32 and bf16 (bf16 has fp32's range), the fp16 range above for fp16.
struct ExponentRange {
  int min, max;
};
ExponentRange storage_exponents(StorageType storage);
rc::Gen<float> storage_float(StorageType storage);

// A spec the implementation supports. `partial`: true forces rotary_dim < head_dim, false forces
// rotary_dim == head_dim, unset (the default) picks either.
enum class Rotary { any, full, partial };
// Frequency scaling is picked half the time (each kind in caps.scaling_kinds, its parameters
// around the published values), never for an implementation that implements none.
rc::Gen<RopeSpec> rope_spec(const RopeCapabilities& caps, Rotary rotary = Rotary::any);

// A spec at a given head_dim and rotary_dim (a model shape's), everything else drawn as rope_spec
// draws it; caps must allow the head_dim (and the partial rotary, if rotary_dim < head_dim).
rc::Gen<RopeSpec> rope_spec_at(const RopeCapabilities& caps, int head_dim, int rotary_dim);

// 2^k - 1, 2^k or 2^k + 1 for k in [0, max_exponent], at least 1, shrinking towards 1: the sizes
// where a blocked or vectorised loop switches (a full block, one short, one over).
rc::Gen<std::int64_t> power_of_two_neighbour(int max_exponent);

// A scaling for a spec with this rotary_dim (LongRoPE's arrays have rotary_dim/2 entries).
rc::Gen<RopeScaling> rope_scaling(const RopeCapabilities& caps, int rotary_dim);
// One kind's parameters, around the published values (shrinking to them); an attention factor
// override one time in eight; yarn's mscale and mscale_all_dim (DeepSeek's) one time in four.
rc::Gen<RopeScaling> scaling_of(ScalingKind kind, int rotary_dim);

// Largest |position| generated for an implementation: kMaxGeneratedPosition, or a quarter of the
// max_position it declares (a plugin's), so that the sums m + n + c stay within it.
std::int64_t position_limit(const RopeCapabilities& caps);

// One position in [-limit, limit], shrinking towards 0.
rc::Gen<std::int64_t> signed_position(std::int64_t limit = kMaxGeneratedPosition);

// `count` positions in [-limit, limit].
rc::Gen<std::vector<std::int64_t>> position_ids(std::size_t count,
                                                std::int64_t limit = kMaxGeneratedPosition);

// How counterexamples print them.
void showValue(const RopeSpec& spec, std::ostream& os);
void showValue(const RopeScaling& scaling, std::ostream& os);
void showValue(ScalingKind kind, std::ostream& os);
void showValue(Layout layout, std::ostream& os);

}  // namespace ropecheck
