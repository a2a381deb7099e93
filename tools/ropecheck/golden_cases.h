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

#include "ropecheck/absolute_encoding.h"
#include "ropecheck/spec.h"
#include "ropecheck/storage.h"

namespace ropecheck {

struct GoldenRopeCase {
  std::string name;         // also the case's directory name
  std::string description;  // which model or situation it stands for
  RopeSpec spec;            // angle_precision fp64: the expected values are the exact rotation
  StorageType dtype = StorageType::fp32;
  std::int64_t q_heads = 1;
  std::int64_t kv_heads = 1;
  std::vector<std::int64_t> positions;  // one per token
};

struct GoldenSinusoidalCase {
  std::string name;
  std::string description;
  SinusoidalSpec spec;
  std::vector<std::int64_t> positions;
};

std::span<const GoldenRopeCase> golden_rope_cases();
std::span<const GoldenSinusoidalCase> golden_sinusoidal_cases();

// `count` inputs for one tensor of one case: splitmix64 seeded by FNV-1a of "case/tensor", the
// top 24 bits as a uniform value in [-2, 2) (exact in fp32), rounded to bf16 for bf16 cases.
// Integer arithmetic only, so every platform and standard library produces the same values.
std::vector<float> golden_inputs(std::string_view case_name, std::string_view tensor,
                                 std::size_t count, StorageType dtype);

}  // namespace ropecheck
