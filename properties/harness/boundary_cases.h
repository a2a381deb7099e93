// The shapes kernels get wrong, reached on purpose rather than by luck of the draw (issue: a
// tiled loop's remainder, a 16-bit row index, a head count the vector width does not divide, a
// table sized for a smaller context, a base whose powers underflow). pick_boundary_case draws a
// QkCase of one class, everything else as the usual generators pick it (rope_cases.h).
#pragma once

#include <ostream>
#include <string_view>

#include "properties/harness/rope_cases.h"

namespace ropecheck {

enum class BoundaryShape {
  one_token_many_heads,   // decode: 1 token, up to 8 kv heads x groups of up to 8 (64 q heads)
  many_tokens_one_head,   // 65..1025 tokens (odd) of one head
  rows_past_65536,        // tokens x q heads > 65 536 rows (head dims 2, 4), distinct positions
  model_head_dims,        // 64, 72, 80, 96, 128, 256; rotary halves not a power of two; odd tokens
  positions_near_max,     // |m| within 64 of the largest position the implementation declares
  large_bases,            // bases 1e4..1e7 (Llama 3's 5e5, Qwen's 1e6, 1e7 long-context models)
};
inline constexpr BoundaryShape kAllBoundaryShapes[] = {
    BoundaryShape::one_token_many_heads, BoundaryShape::many_tokens_one_head,
    BoundaryShape::rows_past_65536,      BoundaryShape::model_head_dims,
    BoundaryShape::positions_near_max,   BoundaryShape::large_bases,
};
std::string_view to_string(BoundaryShape shape);
void showValue(BoundaryShape shape, std::ostream& os);  // its name, in a counterexample

// Must be called inside a RapidCheck property. Stays within the capabilities (layouts, angle
// precisions, partial rotary, max_head_dim, max_position, scaling kinds).
QkCase pick_boundary_case(const RopeCapabilities& caps, BoundaryShape shape);

}  // namespace ropecheck
