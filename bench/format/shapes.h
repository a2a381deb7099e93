// The benchmark shapes, named after the models they come from (ggml test-backend-ops style).
//   RoPE: the table of core/model_shapes.h that verify runs every property at too.
//   Attention: causal, 8 heads, 128 to 4096 tokens, head_dim 64 and 128; one GQA problem.
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

// A multi-axis shape's 1D twin: the same tensors at one axis, benched in the same run, so that
// a kernel's multi-axis cost is the ratio of its two fractions of the probe (issue 38's goal:
// >= 0.90 level by level).
struct MultiAxisTwin {
  std::string_view shape, one_axis;
};
inline constexpr MultiAxisTwin kMultiAxisTwins[] = {
    {"qwen2vl_7b_mrope_prefill512", "qwen2vl_7b_prefill512"},
    {"qwen3vl_8b_imrope_prefill512", "llama3_8b_gqa_prefill512"},
};
inline constexpr double kMultiAxisGoal = 0.90;

// The 1D twin of a multi-axis shape, "" for none.
constexpr std::string_view one_axis_twin(std::string_view shape) {
  for (const MultiAxisTwin& t : kMultiAxisTwins) {
    if (t.shape == shape) return t.one_axis;
  }
  return {};
}

// The backward pass (core/spec.h, Pass) is benchmarked on the shapes training runs: every
// prefill (a decode step has no backward). An own kernel's backward is the same pass over the
// same bytes as its forward (impls/kernels/kernel_rope.cc): its fraction of the same-run probe
// should be its forward's, within this much (issue 39).
constexpr bool has_backward_case(const RopeShape& shape) { return shape.tokens > 1; }
inline constexpr double kBackwardFractionTolerance = 0.05;
inline constexpr std::int64_t kAttentionHeads = 8;

struct AttentionProblem {
  std::int64_t tokens;
  int head_dim;
  bool with_rope = false;  // also timed with RoPE, separate and fused (case_name.h AttentionRope)
  std::int64_t kv_heads = kAttentionHeads;  // fewer: grouped-query attention
};

inline constexpr AttentionProblem kAttentionProblems[] = {
    {128, 64}, {512, 64}, {512, 128, true}, {1024, 128}, {2048, 128, true}, {4096, 128},
    // GQA: Llama 3 8B's 4 q heads a kv head, at llama.cpp's default micro-batch (n_ubatch 512)
    {512, 128, false, 2},
};
// The attention peers (attention plugins: llama.cpp's flash attention) are timed on the
// head_dim 128 problems, the dimension of the models they serve.
constexpr bool peer_problem(const AttentionProblem& p) { return p.head_dim == 128; }

// The sinusoidal table: positions x d_model (the original Transformer's 512).
struct TableShape {
  const char* name;
  std::int64_t positions, d_model;
};
inline constexpr TableShape kTableShapes[] = {{"transformer_base_4096x512", 4096, 512}};

}  // namespace ropecheck::bench
