// The golden cases with frequency scaling (scaling.h), kept apart from the unscaled table in
// golden_cases.cc: every kind ropecheck implements, with parameters of the models that use it,
// in fp32 and in a 16-bit storage. golden_rope_cases() lists them after the unscaled ones.
//   ropecheck vectors --out /tmp/golden && grep -A3 '"scaling"' /tmp/golden/manifest.json
#pragma once

#include <vector>

#include "vectors/golden_cases.h"

namespace ropecheck {

// In manifest order. Dynamic NTK and LongRoPE cases have sequence_length = max(positions) + 1
// (HF transformers' reading of the current length), on both sides of their switch.
const std::vector<GoldenRopeCase>& scaled_golden_rope_cases();

// Scaled cases added after the multi-axis ones, which golden_rope_cases() lists last so that
// every earlier case keeps its place in the manifest: YaRN's attention factor from DeepSeek's
// mscale and mscale_all_dim.
const std::vector<GoldenRopeCase>& mscale_golden_rope_cases();

}  // namespace ropecheck
