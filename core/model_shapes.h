// The RoPE calls of real models, one table for the bench and for verify: a kernel switches paths
// at their sizes (blocking past the caches, the thread split, wide heads, long contexts), so the
// bench times them and every property runs once at each of them (properties/harness/
// model_shape_cases.h).
//   Bench's: prefill 512 and 4096 tokens at 8 heads x 64 (GPT-2 small) and 32 heads x 128
//   (Llama 7B), GQA 32 q / 8 kv heads (Llama 3 8B), decode (one token at 4095 and at 131071),
//   partial rotary (rotary_dim = head_dim / 2, GPT-J/NeoX style).
//   Verify's besides: Gemma's head_dim 256, and DeepSeek's MLA split (192 wide heads, 64 rotary
//   features, one shared rotary key head); DeepSeek-V3's own rope call (q_pe and k_pe, below) with
//   its YaRN spec.
//   Multi-axis (position_axes.h): Qwen2-VL 7B's MRoPE prefill (28 q / 4 kv heads x 128, sections
//   16/24/24), benched beside its 1D twin (the same tensors at one axis: the kernels' multi-axis
//   cost is the ratio of the two); Qwen3-VL 8B's interleaved MRoPE (32 / 8 x 128, 24/20/20),
//   benched beside llama3_8b_gqa_prefill512 (the same tensors); the Qwen2-VL vision tower's 2D
//   RoPE (16 heads x 80, 20/20), verified.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "core/position_axes.h"
#include "core/spec.h"

namespace ropecheck {

// A model's own rotation, for a shape whose call is that model's: it replaces the drawn layout,
// base and scaling, each where the subject implements it (the angle precision stays the
// subject's).
struct ModelRope {
  Layout layout;
  double base;
  RopeScaling scaling;
};

// DeepSeek-V3's config: rope_theta 10000, rope_scaling yarn factor 40 over 4096, beta_fast 32,
// beta_slow 1, mscale = mscale_all_dim = 1 (attention factor get_mscale(40, 1) / itself = 1);
// interleaved, as its reference code rotates and as HF gets by permuting q_pe and k_pe to
// half-split before rotate_half.
inline const ModelRope kDeepSeekV3Rope = [] {
  RopeScaling yarn;
  yarn.kind = ScalingKind::yarn;
  yarn.factor = 40.0;
  yarn.original_max_position = 4096;
  yarn.beta_fast = 32.0;
  yarn.beta_slow = 1.0;
  yarn.mscale = 1.0;
  yarn.mscale_all_dim = 1.0;
  return ModelRope{Layout::interleaved, 10000.0, yarn};
}();

struct ModelShape {
  const char* name;
  std::int64_t tokens, q_heads, k_heads, head_dim;
  std::int64_t rotary_dim = 0;      // 0: head_dim
  std::int64_t first_position = 0;  // a decode token's position; a prefill's first (bench)
  bool references_too = false;      // also the slow scalar references (see runs_model_shape)
  PositionAxes axes{};              // multi-axis RoPE's (a vision-language model's); 1D by default
  bool verified = true;             // verify runs it too (a bench-only twin of another shape: no)
  const ModelRope* rope = nullptr;  // the model's own rotation; nullptr: drawn (the call's sizes matter)
};

inline constexpr ModelShape kBenchedModelShapes[] = {
    {"gpt2_small_prefill512", 512, 8, 8, 64, 0, 0, true},  // in cache: 2 MiB of q and k
    {"gpt2_small_prefill4096", 4096, 8, 8, 64},
    {"llama7b_prefill512", 512, 32, 32, 128, 0, 0, true},
    {"llama7b_prefill4096", 4096, 32, 32, 128},  // out of cache: 128 MiB of q and k
    {"llama3_8b_gqa_prefill512", 512, 32, 8, 128},
    {"gptj_partial_prefill512", 512, 32, 32, 128, 64},
    {"llama7b_decode_at4095", 1, 32, 32, 128, 0, 4095, true},  // one token: 32 KiB
    {"llama7b_decode_at131071", 1, 32, 32, 128, 0, 131071},
    // A prompt of text and one image (get_rope_index's positions), sections 16/24/24; its 1D
    // twin (bench only: its path is llama3_8b_gqa_prefill512's).
    {"qwen2vl_7b_mrope_prefill512", 512, 28, 4, 128, 0, 0, false,
     {AxisMode::mrope, {16, 24, 24}}},
    {"qwen2vl_7b_prefill512", 512, 28, 4, 128, 0, 0, false, {}, false},
    {"qwen3vl_8b_imrope_prefill512", 512, 32, 8, 128, 0, 0, false,
     {AxisMode::imrope, {24, 20, 20}}},
};

inline constexpr ModelShape kVerifiedOnlyModelShapes[] = {
    {"gemma7b_prefill512", 512, 16, 16, 256},
    {"deepseek_mla_prefill512", 512, 16, 1, 192, 64},
    // HF and vLLM rotate the q_pe/k_pe slices alone (64 of a 192-wide q head): 128 x 64 and k_pe's 1 x 64.
    {.name = "deepseek_v3_rope_prefill512", .tokens = 512, .q_heads = 128, .k_heads = 1, .head_dim = 64,
     .rope = &kDeepSeekV3Rope},
    // 512 patches, 32 to a row (a 448 x 224 image at patch 14), every head its own key.
    {"qwen2vl_vision_prefill512", 512, 16, 16, 80, 0, 0, false, {AxisMode::vision, {20, 20, 0}}},
};

// Every shape verify runs, bench's first.
inline constexpr std::span<const ModelShape> kModelShapeTables[] = {kBenchedModelShapes,
                                                                     kVerifiedOnlyModelShapes};

// The shape named `name` in either table, nullptr for none.
constexpr const ModelShape* find_model_shape(std::string_view name) {
  for (const auto table : kModelShapeTables) {
    for (const ModelShape& shape : table) {
      if (name == shape.name) return &shape;
    }
  }
  return nullptr;
}

// The slow references (explicit loops for clarity, long double, std::complex; the mutants built
// on them) are 10-100x slower than the kernels: they run the shapes marked references_too, and the
// dense O(head_dim^2) definition only those up to head_dim 64. Everything else, the kernels, the
// plugins and the Python functions, runs every shape.
constexpr bool runs_model_shape(std::string_view impl_id, const ModelShape& shape) {
  const bool kernel = impl_id.starts_with("kernel") || impl_id.starts_with("mutant/kernel");
  const bool reference = !kernel && (impl_id.ends_with("/scalar") || impl_id.starts_with("mutant/"));
  if (impl_id.starts_with("rotation_matrix/")) return shape.references_too && shape.head_dim <= 64;
  return !reference || shape.references_too;
}

}  // namespace ropecheck
