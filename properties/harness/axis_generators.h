// Generators for multi-axis RoPE (core/position_axes.h): the axes of a spec an implementation
// supports, and positions as vision-language models give them, axis_count(spec) per token,
// token-major.
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <ostream>
#include <vector>

#include "core/spec.h"
#include "impls/rope_impl.h"

namespace ropecheck {

// One axis half the time where the implementation declares more (shrinking to it), else one of
// its multi-axis modes with sections splitting rotary_dim/2 pairs: the models' proportions
// (Qwen2-VL's 1/4 3/8 3/8, Qwen3-VL's 3/8 5/16 5/16, the vision halves) or any split, empty
// sections included. `scaled`: the spec has frequency scaling, which vision does not take.
rc::Gen<PositionAxes> position_axes(const RopeCapabilities& caps, int rotary_dim, bool scaled);

// `tokens` tokens' positions for `spec`: position_ids (generators.h) for one axis; for several,
// one of: text (every axis at one position, a 1D run), an image (a grid of patches, t fixed,
// h and w the row and column from an offset; vision: row and column), each axis its own values,
// or text followed by an image. Every position within [-limit, limit].
rc::Gen<std::vector<std::int64_t>> token_positions(const RopeSpec& spec, std::size_t tokens,
                                                   std::int64_t limit);

// A grid's positions: `tokens` patches `width` to a row, from `offset` on every axis (t stays
// at offset; vision: row and column). Also the model shapes' image (model_shape_cases.cc).
std::vector<std::int64_t> grid_positions(int axes, std::size_t tokens, std::int64_t width,
                                         std::int64_t offset);

// caps without the axes a scaled spec cannot take (vision): for the properties that put a scaling
// of their own into the case's spec.
RopeCapabilities scalable(RopeCapabilities caps);

void showValue(const PositionAxes& axes, std::ostream& os);

}  // namespace ropecheck
