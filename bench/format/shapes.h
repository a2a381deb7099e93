// The benchmark shapes, named after the models they come from (ggml test-backend-ops style).
//   RoPE: the table of core/model_shapes.h that verify runs every property at too.
//   Attention: causal, 8 heads, 128 to 4096 tokens, head_dim 64 and 128.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "core/model_shapes.h"

namespace ropecheck::bench {

// Bench's RoPE shapes are verify's too (core/model_shapes.h).
using RopeShape = ModelShape;
inline constexpr std::span<const RopeShape> kRopeShapes = kBenchedModelShapes;

// The shape named `name`, nullptr for none: how a reader of bench.json (the report) learns a
// case's tokens and heads from the shape in its name.
constexpr const RopeShape* find_rope_shape(std::string_view name) {
  for (const RopeShape& shape : kRopeShapes) {
    if (name == shape.name) return &shape;
  }
  return nullptr;
}

struct AttentionProblem {
  std::int64_t tokens;
  int head_dim;
  bool with_rope = false;  // also timed with RoPE, separate and fused (case_name.h AttentionRope)
};

inline constexpr std::int64_t kAttentionHeads = 8;
inline constexpr AttentionProblem kAttentionProblems[] = {
    {128, 64}, {512, 64}, {512, 128, true}, {1024, 128}, {2048, 128, true}, {4096, 128},
};

// The sinusoidal table: positions x d_model (the original Transformer's 512).
struct TableShape {
  const char* name;
  std::int64_t positions, d_model;
};
inline constexpr TableShape kTableShapes[] = {{"transformer_base_4096x512", 4096, 512}};

}  // namespace ropecheck::bench
