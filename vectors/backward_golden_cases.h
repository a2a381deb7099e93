// The golden cases of RoPE's backward pass (core/spec.h, Pass): q.npy and k.npy hold the gradient
// dy of a loss with respect to the rotated q and k, the expected outputs the gradient with respect
// to the unrotated ones, dx = a R(m)^T dy. A training kernel's backward (Liger's, Unsloth's,
// TransformerEngine's, ggml's rope_back) is checked offline against them like a forward port.
// golden_rope_cases() lists them last.
//   ropecheck vectors --out /tmp/golden && grep -B3 '"pass": "backward"' /tmp/golden/manifest.json
#pragma once

#include <vector>

#include "vectors/golden_cases.h"

namespace ropecheck {

// In manifest order.
const std::vector<GoldenRopeCase>& backward_golden_rope_cases();

}  // namespace ropecheck
