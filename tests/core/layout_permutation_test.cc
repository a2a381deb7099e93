// The layout permutation and seed 002's weight permutation, against the HF expression
// w.view(n_heads, head_dim/2, 2, dim_in).transpose(1, 2).reshape(n_heads * head_dim, dim_in)
// written out independently with index arithmetic.
#include <gtest/gtest.h>

#include "core/layout_permutation.h"

namespace ropecheck {
namespace {

// Row r of the result is row src(r) of w, reading the view/transpose/reshape literally: result
// index (h, t, k) with t in {0, 1}, k < head_dim/2 comes from view index (h, k, t).
std::vector<float> hf_expression(const std::vector<float>& w, int n_heads, int head_dim, int dim_in) {
  std::vector<float> out(w.size());
  const int half = head_dim / 2;
  for (int h = 0; h < n_heads; ++h) {
    for (int t = 0; t < 2; ++t) {
      for (int k = 0; k < half; ++k) {
        const int dst_row = h * head_dim + t * half + k;
        const int src_row = h * head_dim + k * 2 + t;
        for (int c = 0; c < dim_in; ++c) {
          out[static_cast<std::size_t>(dst_row * dim_in + c)] = w[static_cast<std::size_t>(src_row * dim_in + c)];
        }
      }
    }
  }
  return out;
}

std::vector<float> numbered(std::size_t n) {
  std::vector<float> w(n);
  for (std::size_t j = 0; j < n; ++j) w[j] = static_cast<float>(j);
  return w;
}

TEST(LayoutPermutation, SeedExampleD6) {
  // Seed 002, d = 6: rows (0,1) -> (0,3), (2,3) -> (1,4), (4,5) -> (2,5).
  EXPECT_EQ(interleaved_to_half_split(6), (std::vector<int>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(interleaved_to_half_split(2), (std::vector<int>{0, 1}));
  const auto to = interleaved_to_half_split(128);
  EXPECT_EQ(to[126], 63);
  EXPECT_EQ(to[127], 127);
}

TEST(LayoutPermutation, MatchesTheHfExpression) {
  for (const auto& [heads, head_dim, dim_in] : {std::tuple{1, 6, 1}, {3, 8, 5}, {2, 128, 3}}) {
    const auto w = numbered(static_cast<std::size_t>(heads * head_dim * dim_in));
    EXPECT_EQ(permute_for_rotate_half(w, heads, dim_in), hf_expression(w, heads, head_dim, dim_in))
        << heads << " heads x " << head_dim;
  }
}

TEST(LayoutPermutation, InverseRoundTrips) {
  const auto w = numbered(3 * 16 * 7);
  EXPECT_EQ(unpermute_from_rotate_half(permute_for_rotate_half(w, 3, 7), 3, 7), w);
  EXPECT_EQ(permute_for_rotate_half(unpermute_from_rotate_half(w, 3, 7), 3, 7), w);
  EXPECT_NE(permute_for_rotate_half(w, 3, 7), w);
}

TEST(LayoutPermutation, HeadsAreIndependent) {
  // Permuting 3 heads at once equals permuting each head's block on its own.
  const auto w = numbered(3 * 8 * 2);
  const auto all = permute_for_rotate_half(w, 3, 2);
  for (std::size_t h = 0; h < 3; ++h) {
    const std::vector<float> block(w.begin() + static_cast<std::ptrdiff_t>(h * 16),
                                   w.begin() + static_cast<std::ptrdiff_t>((h + 1) * 16));
    const auto one = permute_for_rotate_half(block, 1, 2);
    EXPECT_TRUE(std::equal(one.begin(), one.end(), all.begin() + static_cast<std::ptrdiff_t>(h * 16)));
  }
}

TEST(LayoutPermutation, ScatterAndGatherAreInverse) {
  const auto to = interleaved_to_half_split(6);
  const std::vector<float> x = {0, 1, 2, 3, 4, 5, 6, 7};  // 6 rotary features, 2 tail
  std::vector<float> half(8), back(8);
  scatter_features(x, half, to);
  EXPECT_EQ(half, (std::vector<float>{0, 2, 4, 1, 3, 5, 6, 7}));
  gather_features(half, back, to);
  EXPECT_EQ(back, x);
}

TEST(LayoutPermutation, ScatterAndGatherMoveEveryMappedFeature) {
  // Any map, not only interleaved_to_half_split, whose last feature stays in place: a reversal
  // moves the first and the last feature too.
  const std::vector<int> reversed = {3, 2, 1, 0};
  const std::vector<float> x = {10, 11, 12, 13, 14};  // 4 mapped features, 1 tail
  std::vector<float> scattered(5), gathered(5);
  scatter_features(x, scattered, reversed);
  EXPECT_EQ(scattered, (std::vector<float>{13, 12, 11, 10, 14}));
  gather_features(x, gathered, reversed);
  EXPECT_EQ(gathered, (std::vector<float>{13, 12, 11, 10, 14}));
}

}  // namespace
}  // namespace ropecheck
