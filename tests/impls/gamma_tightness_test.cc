// gamma32(n) = n u / (1 - n u) (core/tolerance.h) is tight for the fp32 chains the attention and
// multi-head bounds apply it to (properties/attention_properties.cc, multi_head_reference.cc):
// a sum of n terms accumulated one after another, one rounding per term, is off by at most
// gamma_n times the sum of the terms' magnitudes. attention_blas's softmax sums its T
// exponentials so (impls/kernels/softmax_scalar.cc). With one score the maximum and every other
// 16.41 below it, the terms are 1 and then T - 1 times exp(-16.41) = 1.25u: each addition rounds
// up by 0.75u, the sum ends 0.75 gamma_T high, and with V all ones every output as much low.
// (sgemm's P V sum is such a chain too, but OpenBLAS splits it: it reaches 0.04 of gamma_T.)
// Run: ctest --preset default -R BoundTightness
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/tolerance.h"
#include "impls/attention/attention_impl.h"
#include "impls/registry.h"

namespace ropecheck {
namespace {

TEST(BoundTightness, Gamma32OfAttentionsSoftmaxSum) {
  constexpr std::int64_t kTokens = 256;
  constexpr int kHeadDim = 4;  // scale 1/2, exact
  const AttentionImpl* impl = find_attention("attention_blas/scalar");
  ASSERT_NE(impl, nullptr);
  const AttentionShape shape{kTokens, 1, 1, kHeadDim, false};
  std::vector<float> q(kTokens * kHeadDim, 0.0f), k(kTokens * kHeadDim, 0.0f);
  const std::vector<float> v(kTokens * kHeadDim, 1.0f);
  q[0] = 1.0f;  // query 0 scores key 0 at 0, every later key at -32.82 / 2
  for (std::int64_t j = 1; j < kTokens; ++j) k[static_cast<std::size_t>(j * kHeadDim)] = -32.82f;
  std::vector<float> out(q.size());
  impl->run(shape, nullptr, {}, q, k, v, out);
  // The weights sum to 1 and V is all ones: every output of query 0 is exactly 1, and the terms'
  // magnitudes sum to 1 + (T - 1) exp(-16.41).
  const double sum_abs = 1 + static_cast<double>(kTokens - 1) * std::exp(-16.41);
  double worst = 0;
  for (int c = 0; c < kHeadDim; ++c) {
    worst = std::max(worst, std::abs(out[static_cast<std::size_t>(c)] - 1.0) / (gamma32(kTokens) * sum_abs));
  }
  ::testing::Test::RecordProperty("gamma32 attention_blas/scalar softmax sum", std::to_string(worst));
  EXPECT_LE(worst, 1.0);
  EXPECT_GE(worst, 0.5) << "the chain's error is under half of gamma_T: doubled, it would still pass";
}

}  // namespace
}  // namespace ropecheck
