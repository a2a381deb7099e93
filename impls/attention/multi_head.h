// Multi-head attention around the attention implementations (seed 003): x [tokens][d_model] ->
// q = x W_q, k = x W_k, v = x W_v by cblas_sgemm -> every head attended by an AttentionImpl
// (which rotates q and k when the positions are rotary) -> merged heads times W_o ->
// [tokens][d_model]. Weights are row-major [in][out], so x W_q is already the
// [tokens][q_heads][head_dim] layout the RoPE and attention code use: splitting into heads and
// merging them (concatenation) cost nothing. Tested by tests/properties/multi_head_test.cc.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "impls/attention/attention_impl.h"
#include "core/spec.h"
#include "core/tensor.h"

namespace ropecheck {

struct MultiHeadWeights {
  int d_model = 0;
  int q_heads = 0;
  int kv_heads = 0;  // divides q_heads (GQA); equal to q_heads for seed 003's classic form
  int head_dim = 0;  // d_model need not be q_heads * head_dim (seed 003 takes d_k = d_model / h)
  std::vector<float> w_q;  // [d_model][q_heads * head_dim]
  std::vector<float> w_k;  // [d_model][kv_heads * head_dim]
  std::vector<float> w_v;  // [d_model][kv_heads * head_dim]
  std::vector<float> w_o;  // [q_heads * head_dim][d_model]
};

// Throws InvalidInput for non-positive sizes, q_heads not a multiple of kv_heads, or a weight
// matrix whose size is not the one its shape needs.
void validate(const MultiHeadWeights& weights);

// out = x w in fp32 by cblas_sgemm, row-major: x [rows][inner], w [inner][cols], out [rows][cols].
// Throws InvalidInput for non-positive or oversized (> INT_MAX) dimensions or mismatched sizes.
void project(std::span<const float> x, std::span<const float> w, std::int64_t rows,
             std::int64_t inner, std::int64_t cols, std::span<float> out);
std::vector<float> project(std::span<const float> x, std::span<const float> w, std::int64_t rows,
                           std::int64_t inner, std::int64_t cols);

enum class PositionalKind {
  none,      // seed 000's position-blind attention
  absolute,  // a table row added to each token before the projections (sinusoidal or learned)
  rotary,    // RoPE on q and k, by the AttentionImpl's RoPE path
};

// How token positions enter. The spans are views: they must outlive the call that uses them.
struct PositionalEncoding {
  PositionalKind kind = PositionalKind::none;
  PositionIds positions;         // absolute, rotary: one per token (a table row, or m)
  std::span<const float> table;  // absolute: [rows][d_model]; token t gets row positions[t]
  RopeSpec rope;                 // rotary: head_dim must be the weights' head_dim
};

PositionalEncoding no_positions();
PositionalEncoding absolute_positions(std::span<const float> table, PositionIds positions);
PositionalEncoding rotary_positions(const RopeSpec& rope, PositionIds positions);

// The whole layer on x [tokens][d_model]; returns [tokens][d_model]. causal: token i attends to
// tokens 0..i; otherwise to every token. Throws InvalidInput for bad weights, an x that is not
// tokens x d_model, a positions count other than tokens, a table row out of range, a table that
// is not a whole number of d_model rows, or a RoPE spec that does not fit head_dim.
std::vector<float> multi_head_attention(const MultiHeadWeights& weights, std::span<const float> x,
                                        std::int64_t tokens, const PositionalEncoding& positional,
                                        const AttentionImpl& attention, bool causal);

}  // namespace ropecheck
