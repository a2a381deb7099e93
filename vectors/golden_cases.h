// The golden-vector case table (`ropecheck vectors`): which specs, shapes, positions and dtypes
// a porter gets, and the deterministic inputs of each case. Changing a case changes the vectors
// everyone compares against: add cases, do not edit them.
//   ropecheck vectors --out /tmp/golden && cat /tmp/golden/manifest.json
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "impls/sinusoidal/absolute_encoding.h"
#include "core/spec.h"
#include "core/storage.h"

namespace ropecheck {

struct GoldenRopeCase {
  std::string name;         // also the case's directory name
  std::string description;  // which model or situation it stands for
  RopeSpec spec;            // angle_precision fp64: the expected values are the exact rotation
  StorageType dtype = StorageType::fp32;
  std::int64_t q_heads = 1;
  std::int64_t kv_heads = 1;
  // axis_count(spec) per token, token-major (position_axes.h): one per token but for the
  // multi-axis cases, which the .npy files store as [tokens, axes].
  std::vector<std::int64_t> positions;
  // Inputs are uniform in [-2 scale, 2 scale): fp16 cases move them under fp16's smallest
  // normal (subnormal handling) or up to its top binade (overflow margin). 1 for the others.
  float input_scale = 1.0f;
};

// The case's token count: its positions over the positions per token.
inline std::int64_t golden_tokens(const GoldenRopeCase& c) {
  return static_cast<std::int64_t>(c.positions.size()) / axis_count(c.spec);
}

struct GoldenSinusoidalCase {
  std::string name;
  std::string description;
  SinusoidalSpec spec;
  std::vector<std::int64_t> positions;
};

std::span<const GoldenRopeCase> golden_rope_cases();
std::span<const GoldenSinusoidalCase> golden_sinusoidal_cases();

// `count` inputs for one tensor of one case: splitmix64 seeded by FNV-1a of "case/tensor", the
// top 24 bits as a uniform value in [-2, 2) (exact in fp32), times `scale` (one IEEE fp32
// product, exact for a power of two), rounded to the case's dtype. Integer arithmetic and single
// IEEE operations only, so every platform and standard library produces the same values.
std::vector<float> golden_inputs(std::string_view case_name, std::string_view tensor,
                                 std::size_t count, StorageType dtype, float scale = 1.0f);

// x rounded once to fp16 (nearest even, subnormals kept, 65520 and above to Inf), for the
// *_expected_fp16 files. Not fp16_from_float(float(x)): rounding to float first can land exactly
// on an fp16 midpoint that x was only near, and that tie then goes to the even neighbour, not to
// x's side (1 + 2^-11 + 2^-40 would give 1, not 1 + 2^-10).
Fp16 fp16_from_double(double x);

}  // namespace ropecheck
