// The benchmark shapes, named after the models they come from (ggml test-backend-ops style).
//   RoPE: prefill 512 and 4096 tokens at 8 heads x 64 (GPT-2 small) and 32 heads x 128
//   (Llama 7B), GQA 32 q / 8 kv heads (Llama 3 8B), decode (one token at 4095 and at 131071),
//   partial rotary (rotary_dim = head_dim / 2, GPT-J/NeoX style).
//   Attention: causal, 8 heads, 128 to 4096 tokens, head_dim 64 and 128.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace ropecheck::bench {

struct RopeShape {
  const char* name;
  std::int64_t tokens, q_heads, k_heads, head_dim;
  std::int64_t rotary_dim = 0;      // 0: head_dim
  std::int64_t first_position = 0;  // positions first_position, first_position + 1, ...
  bool references_too = false;      // also the scalar reference implementations (slow)
};

inline constexpr RopeShape kRopeShapes[] = {
    {"gpt2_small_prefill512", 512, 8, 8, 64, 0, 0, true},  // in cache: 2 MiB of q and k
    {"gpt2_small_prefill4096", 4096, 8, 8, 64},
    {"llama7b_prefill512", 512, 32, 32, 128, 0, 0, true},
    {"llama7b_prefill4096", 4096, 32, 32, 128},  // out of cache: 128 MiB of q and k
    {"llama3_8b_gqa_prefill512", 512, 32, 8, 128},
    {"gptj_partial_prefill512", 512, 32, 32, 128, 64},
    {"llama7b_decode_at4095", 1, 32, 32, 128, 0, 4095, true},  // one token: 32 KiB
    {"llama7b_decode_at131071", 1, 32, 32, 128, 0, 131071},
};

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
