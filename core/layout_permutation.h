// The feature permutation between the two layouts, and the weight permutation of seed 002.
//
// Meta LLaMA checkpoints keep each head's q/k features interleaved (pairs 2k, 2k+1). HF's
// converter permutes the rows of W_q and W_k per head,
//   w.view(n_heads, head_dim/2, 2, dim_in).transpose(1, 2).reshape(n_heads*head_dim, dim_in),
// moving rows (2k, 2k+1) to (k, head_dim/2 + k), so that rotate_half on the half-split layout
// computes the same rotation as the pairwise one, up to that permutation of output features.
#pragma once

#include <span>
#include <vector>

namespace ropecheck {

// Feature index maps for one head vector of length n (even), restricted to the first n features
// (pass rotary_dim to leave a tail untouched). interleaved_to_half_split[j] is the half-split
// index of interleaved feature j: 2k -> k, 2k+1 -> n/2 + k.
std::vector<int> interleaved_to_half_split(int n);

// out[to[j]] = in[j] for the first to.size() features; the rest copied unchanged.
void scatter_features(std::span<const float> in, std::span<float> out, std::span<const int> to);
void gather_features(std::span<const float> in, std::span<float> out, std::span<const int> to);

// Seed 002: W is row-major [n_heads * head_dim][dim_in]; returns the HF-permuted copy.
// Throws InvalidInput when the sizes do not divide or head_dim is odd.
std::vector<float> permute_for_rotate_half(std::span<const float> w, int n_heads, int dim_in);
// The inverse: HF layout back to Meta's interleaved layout.
std::vector<float> unpermute_from_rotate_half(std::span<const float> w, int n_heads, int dim_in);

}  // namespace ropecheck
