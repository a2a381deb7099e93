// The golden cases with multi-axis RoPE (core/position_axes.h): Qwen2-VL's MRoPE, Qwen3-VL's
// interleaved MRoPE and Qwen2-VL's 2D vision RoPE, with the positions those models give a
// text-and-image prompt or a patch grid. golden_rope_cases() lists them after the scaled ones.
//   ropecheck vectors --out /tmp/golden && grep -A6 '"axes": {"mode": "mrope"' /tmp/golden/manifest.json
#pragma once

#include <vector>

#include "vectors/golden_cases.h"

namespace ropecheck {

// In manifest order; positions token-major, axis_count(spec) per token (t, h, w; row, column).
const std::vector<GoldenRopeCase>& axes_golden_rope_cases();

// A text-and-image prompt's positions as Qwen2-VL's get_rope_index gives them: `text_before`
// text tokens (t = h = w = their index), an image of rows x columns merged patches (t at the
// image's start s, h = s + row, w = s + column), then `text_after` text tokens from s + max(rows,
// columns). Exposed for the tests, which rebuild a case's positions from it.
std::vector<std::int64_t> text_image_positions(int text_before, int rows, int columns, int text_after);

// A rows x columns patch grid's (row, column) positions in the vision tower's order: 2 x 2 merge
// windows one after the other (Qwen2-VL's rot_pos_emb with spatial_merge_size 2).
std::vector<std::int64_t> merged_patch_grid_positions(int rows, int columns);

}  // namespace ropecheck
