// Multi-head attention cases for the properties and tests/properties/multi_head_test.cc: a RapidCheck
// generator of layers and inputs, a float64 reference with a per-element bound derived from fp32
// rounding (multi_head_reference.cc), and seed 000's reordering check built on the two.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "impls/attention/attention_impl.h"
#include "impls/attention/multi_head.h"

namespace ropecheck {

// A layer and its input, with a sinusoidal and a learned table and a RoPE spec for positions
// 0..tokens-1, so that any PositionalKind can be asked of it.
struct MultiHeadCase {
  MultiHeadWeights weights;
  std::int64_t tokens = 0;
  bool causal = false;
  std::vector<float> x;           // [tokens][d_model]
  std::vector<std::int64_t> positions;  // 0..tokens-1
  std::vector<float> sinusoidal;  // [tokens][d_model], sinusoidal/formula at positions
  std::vector<float> learned;     // [tokens][d_model], a LearnedPositionTable
  RopeSpec rope;                  // fp64 angles: the kernels AttentionImpl uses form them so
};

// Inside a RapidCheck property: tokens min_tokens..16, GQA heads, head_dim 2..16, d_model either
// q_heads * head_dim (seed 003) or another even width up to 64; activations on a 1/64 grid in
// [-4, 4] and weights of scale 1/sqrt(d_model), so that scores are O(1) and the softmax is
// neither flat nor one-hot. causal_any: the mask is drawn, otherwise full.
MultiHeadCase pick_multi_head_case(bool causal_any, std::int64_t min_tokens = 1);

// Reordering checks take at least 3 tokens: with 2, RoPE's whole effect on a swap is the sign of
// one relative offset, which random q and k leave below the rounding bound about once in 1500
// cases (measured: never in 16000 cases with 3 to 16 tokens).
inline constexpr std::int64_t kMinReorderTokens = 3;

// The encoding `kind` for this case, at positions (absolute: the sinusoidal table when
// `learned` is false). Views into c: c must outlive it.
PositionalEncoding positional_for(const MultiHeadCase& c, PositionalKind kind, bool learned);

// Token t of the result is token order[t] of x ([tokens][width]).
std::vector<float> permute_tokens(std::span<const float> x, std::int64_t width,
                                  std::span<const std::int64_t> order);

// The layer in float64 on the same fp32 inputs (exact up to 2^-40 relative, far below fp32
// rounding), and for every output element a bound on |fp32 layer - reference| for an
// implementation that projects by fp32 sgemm, rotates with the fp32 kernel (fp64 angles), and
// attends within the fp32 model of attention_blas, on K and V kept in `kv` (an attention's
// kv_storage(): fp16 rounds each once more). The derivation is in the .cc.
struct MultiHeadReference {
  std::vector<double> out;    // [tokens][d_model]
  std::vector<double> bound;  // same shape
};
MultiHeadReference multi_head_reference(const MultiHeadWeights& weights, std::span<const float> x,
                                        std::int64_t tokens, const PositionalEncoding& positional,
                                        bool causal, StorageType kv = StorageType::fp32);

// Seed 000 on the whole layer: run x, and x with its tokens reordered by `order`, both with the
// same positions 0..tokens-1 (the encoding follows the slot, not the token). Compares output t
// of the second run with output order[t] of the first, each element against the sum of both
// runs' bounds. worst_ratio <= 1: equivariant within rounding; > 1: the exact outputs differ.
struct ReorderGap {
  double worst_ratio = 0;
  double diff = 0, bound = 0;  // at the worst element
  std::string where;           // "slot t (token order[t]), output c"
};
ReorderGap reorder_gap(const AttentionImpl& attention, const MultiHeadCase& c,
                       PositionalKind kind, bool learned, std::span<const std::int64_t> order);

// A non-identity reordering of 0..tokens-1 (tokens >= 2), drawn inside a RapidCheck property.
std::vector<std::int64_t> pick_reordering(std::int64_t tokens);

}  // namespace ropecheck
