// The positions a bench case's tokens are given: a contiguous run from the shape's first position
// for one axis (a prefill, a decode); for a vision-language shape (core/model_shapes.h: axes), a
// prompt as Qwen2-VL's get_rope_index positions it: an eighth of the tokens text (every axis at
// its index), then an image of 32 patches a row (t fixed, h and w its row and column), then text
// again from one past the image's largest position. Fixed, so every process times the same call.
#pragma once

#include <cstdint>
#include <vector>

#include "core/model_shapes.h"

namespace ropecheck::bench {

// tokens * axis_count(shape.axes) positions, token-major.
std::vector<std::int64_t> prompt_positions(const ModelShape& shape);

}  // namespace ropecheck::bench
