// Multi-head attention (impls/attention/multi_head.h): the sgemm projection against a double
// matmul, the whole layer against its float64 reference within the derived fp32 bound, seed 000
// (reordering tokens reorders outputs without positions, not with sinusoidal, learned or rotary
// ones), seed 001's attention_unrotated_qk staying position-blind, bad input.
//   ctest -R multi_head --output-on-failure   (RC_PARAMS="seed=7 max_success=1000" to explore)
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <numeric>
#include <string>

#include "properties/catalogue.h"
#include "properties/harness/multi_head_cases.h"
#include "core/errors.h"
#include "core/tolerance.h"
#include "impls/attention/multi_head.h"
#include "impls/registry.h"
#include "tests/support/test_config.h"

namespace ropecheck {
namespace {

// gamma_n = n u / (1 - n u): a length-n dot product rounded in precision u, in any order, with or
// without FMA, is within gamma_n * sum |x_i w_i| of the exact value (Higham, Accuracy and
// Stability of Numerical Algorithms, 3.1).
double gamma(double n, double u) { return n * u / (1 - n * u); }
constexpr double kUnitRoundoff64 = 0x1p-53;

const AttentionImpl& real_attention(const char* id) {
  const AttentionImpl* impl = find_attention(id);
  RC_ASSERT(impl != nullptr);
  return *impl;
}

// m * 2^e, |m| <= 2^12, e in [-20, 0]: products are exact in double, nothing under- or overflows.
std::vector<float> pick_scaled(std::size_t n) {
  return *rc::gen::container<std::vector<float>>(
      n, rc::gen::apply([](int m, int e) { return std::ldexp(static_cast<float>(m), e); },
                        rc::gen::inRange(-4096, 4097), rc::gen::inRange(-20, 1)));
}

RC_GTEST_PROP(MultiHeadProject, MatchesDoubleMatmulWithinGammaBound, ()) {
  const auto rows = *rc::gen::inRange<std::int64_t>(1, 25);
  const auto inner = *rc::gen::inRange<std::int64_t>(1, 300);
  const auto cols = *rc::gen::inRange<std::int64_t>(1, 25);
  const auto x = pick_scaled(static_cast<std::size_t>(rows * inner));
  const auto w = pick_scaled(static_cast<std::size_t>(inner * cols));
  const auto got = project(x, w, rows, inner, cols);
  // fp32 sgemm within gamma_inner(u32) sum |x||w| of exact; the double reference (exact products,
  // double sums) within gamma_inner(u64) of exact: their sum bounds the difference.
  const double g = gamma32(static_cast<double>(inner)) + gamma(static_cast<double>(inner), kUnitRoundoff64);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      double exact = 0, abs_sum = 0;
      for (std::int64_t i = 0; i < inner; ++i) {
        const double p = static_cast<double>(x[static_cast<std::size_t>(r * inner + i)]) *
                         w[static_cast<std::size_t>(i * cols + c)];
        exact += p;
        abs_sum += std::abs(p);
      }
      const double diff = std::abs(got[static_cast<std::size_t>(r * cols + c)] - exact);
      if (!(diff <= g * abs_sum)) {
        RC_FAIL(fmt::format("out[{}][{}] = {:.9g}, exact {:.17g}: |diff| {:.3g} > bound {:.3g}", r,
                            c, got[static_cast<std::size_t>(r * cols + c)], exact, diff, g * abs_sum));
      }
    }
  }
}

const char* name(PositionalKind kind, bool learned) {
  switch (kind) {
    case PositionalKind::none: return "none";
    case PositionalKind::absolute: return learned ? "learned" : "sinusoidal";
    case PositionalKind::rotary: return "rotary";
  }
  return "?";
}

struct Encoding {
  PositionalKind kind;
  bool learned;
};
constexpr Encoding kPositioned[] = {
    {PositionalKind::absolute, false}, {PositionalKind::absolute, true}, {PositionalKind::rotary, false}};

RC_GTEST_PROP(MultiHead, MatchesFloat64ReferenceWithinDerivedBound, ()) {
  // The reference's own head split, RoPE and merge: a layout slip in the library lands far
  // outside a bound of O(1e-6).
  const MultiHeadCase c = pick_multi_head_case(true);
  for (const char* id : {"attention_naive/scalar", "attention_blas/scalar"}) {
    for (const Encoding e : {Encoding{PositionalKind::none, false}, kPositioned[0], kPositioned[1], kPositioned[2]}) {
      const auto positional = positional_for(c, e.kind, e.learned);
      const auto got = multi_head_attention(c.weights, c.x, c.tokens, positional, real_attention(id), c.causal);
      const auto ref = multi_head_reference(c.weights, c.x, c.tokens, positional, c.causal);
      for (std::size_t j = 0; j < got.size(); ++j) {
        const double diff = std::abs(got[j] - ref.out[j]);
        if (!(diff <= ref.bound[j])) {
          RC_FAIL(fmt::format("{}, {} positions: output {} = {:.9g}, reference {:.17g}: |diff| "
                              "{:.3g} > bound {:.3g}", id, name(e.kind, e.learned), j, got[j],
                              ref.out[j], diff, ref.bound[j]));
        }
      }
    }
  }
}

RC_GTEST_PROP(MultiHeadSeed000, WithoutPositionsReorderingTokensReordersOutputs, ()) {
  const MultiHeadCase c = pick_multi_head_case(false, kMinReorderTokens);
  const auto order = pick_reordering(c.tokens);
  for (const char* id : {"attention_naive/scalar", "attention_blas/scalar"}) {
    const auto gap = reorder_gap(real_attention(id), c, PositionalKind::none, false, order);
    if (!(gap.worst_ratio <= 1)) {
      RC_FAIL(fmt::format("{}: {} changed by {:.3g} > bound {:.3g}", id, gap.where, gap.diff, gap.bound));
    }
  }
}

RC_GTEST_PROP(MultiHeadSeed000, PositionsMakeReorderingChangeOutputs, ()) {
  // A change beyond both runs' rounding bounds means the exact outputs differ.
  const MultiHeadCase c = pick_multi_head_case(false, kMinReorderTokens);
  const auto order = pick_reordering(c.tokens);
  for (const char* id : {"attention_naive/scalar", "attention_blas/scalar"}) {
    for (const Encoding e : kPositioned) {
      const auto gap = reorder_gap(real_attention(id), c, e.kind, e.learned, order);
      if (!(gap.worst_ratio > 1)) {
        RC_FAIL(fmt::format("{}, {} positions: largest change {:.3g} at {} is within the rounding "
                            "bound {:.3g}", id, name(e.kind, e.learned), gap.diff, gap.where, gap.bound));
      }
    }
  }
}

RC_GTEST_PROP(MultiHeadSeed001, UnrotatedQkMutantIsPositionBlindUnderRotary, ()) {
  // Seed 001's lost else: RoPE is computed and dropped, so through the whole layer the rotary
  // positions change nothing and reordering only reorders: the property above catches it.
  const AttentionImpl* mutant = find_attention("mutant/attention_unrotated_qk");
  RC_ASSERT(mutant != nullptr);
  const MultiHeadCase c = pick_multi_head_case(false, kMinReorderTokens);
  const auto order = pick_reordering(c.tokens);
  const auto gap = reorder_gap(*mutant, c, PositionalKind::rotary, false, order);
  if (!(gap.worst_ratio <= 1)) {
    RC_FAIL(fmt::format("{} changed by {:.3g} > bound {:.3g}: did the mutant start using RoPE?",
                        gap.where, gap.diff, gap.bound));
  }
}

const Property& catalogue_property() {
  const Property* property = find_property("mha_positions_break_equivariance");
  if (property == nullptr) throw std::logic_error("mha_positions_break_equivariance not in the catalogue");
  return *property;
}

TEST(MultiHeadCatalogue, PositionsBreakEquivarianceHoldsOnEveryAttention) {
  for (const AttentionImpl* impl : attention_implementations()) {
    if (!impl->available()) continue;  // a softmax level this CPU lacks
    const Subject subject{std::string(impl->id()), nullptr, nullptr, false, impl};
    const auto result = run_property(catalogue_property(), subject, test_run_config());
    EXPECT_EQ(result.status, Status::passed) << impl->id() << ": " << describe_failure(result);
    EXPECT_GT(result.cases, 0);
  }
}

TEST(MultiHeadCatalogue, PositionsBreakEquivarianceKillsUnrotatedQk) {
  const AttentionImpl* mutant = find_attention("mutant/attention_unrotated_qk");
  ASSERT_NE(mutant, nullptr);
  const Subject subject{std::string(mutant->id()), nullptr, nullptr, true, mutant};
  const auto result = run_property(catalogue_property(), subject, test_run_config());
  ASSERT_EQ(result.status, Status::failed) << "the mutant survived";
  EXPECT_NE(result.message.find("with rotary positions"), std::string::npos) << result.message;
}

TEST(MultiHead, IdentityWeightsAreThePlainAttention) {
  // d_model = heads * head_dim and every W = I: sgemm by I is exact, so the layer is the
  // attention on q = k = v = x bit for bit: the split and merge are pure layout.
  const int heads = 2, d = 4, dm = heads * d;
  const std::int64_t tokens = 5;
  MultiHeadWeights w{dm, heads, heads, d, {}, {}, {}, {}};
  std::vector<float> identity(static_cast<std::size_t>(dm * dm), 0.0f);
  for (int i = 0; i < dm; ++i) identity[static_cast<std::size_t>(i * dm + i)] = 1.0f;
  w.w_q = w.w_k = w.w_v = w.w_o = identity;
  std::vector<float> x(static_cast<std::size_t>(tokens * dm));
  for (std::size_t j = 0; j < x.size(); ++j) x[j] = std::sin(0.37f * static_cast<float>(j));
  const AttentionImpl& blas = *find_attention("attention_blas/scalar");
  std::vector<float> want(x.size());
  blas.run({tokens, heads, heads, d, true}, nullptr, {}, x, x, x, want);
  EXPECT_EQ(multi_head_attention(w, x, tokens, no_positions(), blas, true), want);
}

TEST(MultiHeadBadInput, Refused) {
  const AttentionImpl& blas = *find_attention("attention_blas/scalar");
  const int dm = 8, heads = 2, d = 4;
  const std::int64_t tokens = 3;
  const MultiHeadWeights good{dm, heads, heads, d, std::vector<float>(64), std::vector<float>(64),
                              std::vector<float>(64), std::vector<float>(64)};
  const std::vector<float> x(static_cast<std::size_t>(tokens * dm));
  const std::vector<std::int64_t> positions = {0, 1, 2}, two = {0, 1}, far = {0, 1, 3};
  const std::vector<float> table(static_cast<std::size_t>(3 * dm));
  const RopeSpec rope{d, d, 10000.0, Layout::interleaved, AnglePrecision::fp64, {}, {}};
  // The valid call first, so that each refusal below is the one change it names.
  EXPECT_NO_THROW(multi_head_attention(good, x, tokens, absolute_positions(table, positions), blas, false));
  EXPECT_NO_THROW(multi_head_attention(good, x, tokens, rotary_positions(rope, positions), blas, false));

  const auto refuses = [&](MultiHeadWeights w) {
    EXPECT_THROW(multi_head_attention(w, x, tokens, no_positions(), blas, true), InvalidInput);
  };
  MultiHeadWeights w = good;
  w.d_model = 0;
  refuses(w);
  w = good;
  w.kv_heads = 0;
  refuses(w);
  w = good;
  w.q_heads = 3;  // not a multiple of kv_heads, and w_q no longer 8 x 3*4
  refuses(w);
  w = good;
  w.head_dim = 8;  // heads * head_dim no longer what the matrices hold
  refuses(w);
  w = good;
  w.w_k.pop_back();
  refuses(w);
  w = good;
  w.w_o.push_back(0.0f);
  refuses(w);

  EXPECT_THROW(multi_head_attention(good, {}, 0, no_positions(), blas, true), InvalidInput);
  EXPECT_THROW(multi_head_attention(good, std::span(x).first(23), tokens, no_positions(), blas, true), InvalidInput);
  EXPECT_THROW(multi_head_attention(good, x, 4, no_positions(), blas, true), InvalidInput);
  EXPECT_THROW(multi_head_attention(good, x, tokens, absolute_positions(table, two), blas, true), InvalidInput);
  EXPECT_THROW(multi_head_attention(good, x, tokens, absolute_positions(table, far), blas, true), InvalidInput);
  EXPECT_THROW(multi_head_attention(good, x, tokens, absolute_positions(std::span(table).first(20), positions), blas, true), InvalidInput);
  EXPECT_THROW(multi_head_attention(good, x, tokens, absolute_positions({}, positions), blas, true), InvalidInput);
  EXPECT_THROW(multi_head_attention(good, x, tokens, rotary_positions(rope, two), blas, true), InvalidInput);
  EXPECT_THROW(multi_head_attention(good, x, tokens, rotary_positions({8, 8, 10000.0, Layout::interleaved, AnglePrecision::fp64, {}, {}}, positions), blas, true), InvalidInput);
  EXPECT_THROW(multi_head_attention(good, x, tokens, rotary_positions({4, 3, 10000.0, Layout::interleaved, AnglePrecision::fp64, {}, {}}, positions), blas, true), InvalidInput);
  PositionalEncoding stray = no_positions();
  stray.positions = positions;  // positions with no encoding to use them: a caller's mistake
  EXPECT_THROW(multi_head_attention(good, x, tokens, stray, blas, true), InvalidInput);

  const std::vector<float> a(6), b(6);
  std::vector<float> out_buffer(4);
  EXPECT_NO_THROW(project(a, b, 2, 3, 2, out_buffer));
  EXPECT_THROW(project(a, b, 2, 3, 3, out_buffer), InvalidInput);  // w is 3 x 2, not 3 x 3
  EXPECT_THROW(project(a, b, 3, 2, 2), InvalidInput);              // w is 6 floats, not 2 x 2
  EXPECT_THROW(project(a, b, 2, 3, 2, std::span(out_buffer).first(3)), InvalidInput);
  EXPECT_THROW(project(a, b, 0, 3, 2), InvalidInput);
  EXPECT_THROW(project({}, {}, 1, 0, 1), InvalidInput);
}

}  // namespace
}  // namespace ropecheck
