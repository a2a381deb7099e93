// Attention (seed 003, seed 000, seed 001): BLAS == the double reference within a bound derived
// from fp32 accumulation, permutation equivariance without positions (broken by sinusoidal,
// learned and rotary positions), RoPE attention invariant to a common shift, causality, and a
// softmax that stays finite for logits of 1e30 and defines fully masked rows.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include <functional>

#include "ropecheck/absolute_encoding.h"
#include "ropecheck/errors.h"
#include "ropecheck/attention.h"
#include "ropecheck/registry.h"
#include "ropecheck/tolerance.h"

namespace ropecheck {
namespace {

constexpr double kU = 0x1p-24;  // unit roundoff of fp32
double gamma(double n) { return n * kU / (1 - n * kU); }

struct Problem {
  AttentionShape shape;
  std::vector<float> q, k, v;
};

// Values on a 1/64 grid in [-4, 4]: realistic activations, exact in fp32.
std::vector<float> pick_values(std::size_t n) {
  return *rc::gen::container<std::vector<float>>(
      n, rc::gen::map(rc::gen::inRange(-256, 257), [](int x) { return static_cast<float>(x) / 64; }));
}

Problem pick_problem() {
  Problem p;
  p.shape.tokens = *rc::gen::inRange<std::int64_t>(1, 41);
  p.shape.kv_heads = *rc::gen::inRange<std::int64_t>(1, 3);
  p.shape.q_heads = p.shape.kv_heads * *rc::gen::inRange<std::int64_t>(1, 3);
  p.shape.head_dim = *rc::gen::element(2, 6, 16, 64, 128);
  p.shape.causal = *rc::gen::arbitrary<bool>();
  const auto d = static_cast<std::size_t>(p.shape.head_dim);
  p.q = pick_values(static_cast<std::size_t>(p.shape.tokens * p.shape.q_heads) * d);
  p.k = pick_values(static_cast<std::size_t>(p.shape.tokens * p.shape.kv_heads) * d);
  p.v = pick_values(static_cast<std::size_t>(p.shape.tokens * p.shape.kv_heads) * d);
  return p;
}

// Per output element, the bound on |O_blas - O_exact| from the error model:
//   S = Q K^T * scale in fp32:   |dS_ij| <= gamma_d * scale * sum_c |q_ic k_jc| + u |S_ij|
//   softmax (max-subtracted):    P~_ij = P_ij (1 + e_ij),
//     |e_ij| <= 2 max_j |dS_ij| + u |S_ij - max| + 2u (expf, 1 ulp) + gamma_T (sum) + 2u (1/sum, *)
//   O = P~ V in fp32:            |dO_ic| <= sum_j P_ij |v_jc| (|e_ij| + gamma_T (1 + |e_ij|))
// plus the output's own rounding, u |O_ic|.
std::vector<double> blas_bound(const Problem& p, const std::vector<float>& exact_out) {
  const auto& s = p.shape;
  const auto d = static_cast<std::size_t>(s.head_dim);
  const double scale = 1 / std::sqrt(static_cast<double>(s.head_dim));
  std::vector<double> bound(exact_out.size());
  for (std::int64_t h = 0; h < s.q_heads; ++h) {
    const std::int64_t kvh = h / (s.q_heads / s.kv_heads);
    for (std::int64_t i = 0; i < s.tokens; ++i) {
      const std::int64_t visible = s.causal ? i + 1 : s.tokens;
      std::vector<double> score(static_cast<std::size_t>(visible)), ds(score.size());
      for (std::int64_t j = 0; j < visible; ++j) {
        double dot = 0, abs_dot = 0;
        for (std::size_t c = 0; c < d; ++c) {
          const double a = p.q[static_cast<std::size_t>(i * s.q_heads + h) * d + c];
          const double b = p.k[static_cast<std::size_t>(j * s.kv_heads + kvh) * d + c];
          dot += a * b;
          abs_dot += std::abs(a * b);
        }
        score[static_cast<std::size_t>(j)] = dot * scale;
        ds[static_cast<std::size_t>(j)] = gamma(static_cast<double>(d)) * scale * abs_dot + kU * std::abs(dot * scale);
      }
      const double max = *std::max_element(score.begin(), score.end());
      const double max_ds = *std::max_element(ds.begin(), ds.end());
      double sum = 0;
      for (double x : score) sum += std::exp(x - max);
      const double g = gamma(static_cast<double>(visible));
      for (std::size_t c = 0; c < d; ++c) {
        double b = 0;
        for (std::int64_t j = 0; j < visible; ++j) {
          const double pij = std::exp(score[static_cast<std::size_t>(j)] - max) / sum;
          const double e = 2 * max_ds + kU * (max - score[static_cast<std::size_t>(j)]) + 4 * kU + g;
          b += pij * std::abs(p.v[static_cast<std::size_t>(j * s.kv_heads + kvh) * d + c]) * (e + g * (1 + e));
        }
        const std::size_t at = static_cast<std::size_t>(i * s.q_heads + h) * d + c;
        bound[at] = b + kU * std::abs(exact_out[at]);
      }
    }
  }
  return bound;
}

std::vector<float> run(void (*attention)(const AttentionShape&, std::span<const float>,
                                         std::span<const float>, std::span<const float>,
                                         std::span<float>),
                       const Problem& p) {
  std::vector<float> out(p.q.size());
  attention(p.shape, p.q, p.k, p.v, out);
  return out;
}

RC_GTEST_PROP(Attention, BlasMatchesNaiveWithinTheDerivedBound, ()) {
  const Problem p = pick_problem();
  const auto block_rows = *rc::gen::inRange<std::int64_t>(1, p.shape.tokens + 4);
  const auto naive = run(attention_naive, p);
  std::vector<float> blas(p.q.size());
  attention_blas(p.shape, p.q, p.k, p.v, blas, block_rows);
  const auto bound = blas_bound(p, naive);
  for (std::size_t j = 0; j < naive.size(); ++j) {
    // The reference's own error: double accumulation, one rounding to fp32 (u |O|).
    const double allowed = bound[j] + kU * std::abs(naive[j]);
    RC_ASSERT(std::abs(static_cast<double>(blas[j]) - naive[j]) <= allowed);
  }
}

// A fixed, non-degenerate problem for the seed-000 statements (full mask).
Problem fixed_problem(std::int64_t tokens, int heads, int d) {
  Problem p;
  p.shape = {tokens, heads, heads, d, false};
  const auto n = static_cast<std::size_t>(tokens * heads * d);
  p.q.resize(n);
  p.k.resize(n);
  p.v.resize(n);
  for (std::size_t j = 0; j < n; ++j) {
    p.q[j] = std::sin(0.7f * static_cast<float>(j) + 0.3f);
    p.k[j] = std::cos(1.3f * static_cast<float>(j));
    p.v[j] = std::sin(0.1f * static_cast<float>(j * j % 97));
  }
  return p;
}

// Rows (tokens) of every tensor reordered: new token t is old token order[t].
Problem permuted(const Problem& p, const std::vector<std::int64_t>& order) {
  Problem out = p;
  const auto row = static_cast<std::size_t>(p.shape.q_heads * p.shape.head_dim);
  for (std::size_t t = 0; t < order.size(); ++t) {
    for (auto [dst, src] : {std::pair{&out.q, &p.q}, {&out.k, &p.k}, {&out.v, &p.v}}) {
      std::copy_n(src->begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(order[t]) * row), row,
                  dst->begin() + static_cast<std::ptrdiff_t>(t * row));
    }
  }
  return out;
}

// Largest |out_perm[t] - out[order[t]]| relative to the largest |out|.
double equivariance_gap(const Problem& p, const std::vector<std::int64_t>& order,
                        const std::function<void(Problem&)>& add_positions) {
  Problem base = p, moved = permuted(p, order);
  add_positions(base);   // positions follow the slot, not the token
  add_positions(moved);
  const auto out = run(attention_naive, base), out_moved = run(attention_naive, moved);
  const auto row = static_cast<std::size_t>(p.shape.q_heads * p.shape.head_dim);
  double gap = 0, scale = 0;
  for (std::size_t t = 0; t < order.size(); ++t) {
    for (std::size_t c = 0; c < row; ++c) {
      gap = std::max(gap, std::abs(static_cast<double>(out_moved[t * row + c]) -
                                   out[static_cast<std::size_t>(order[t]) * row + c]));
      scale = std::max(scale, std::abs(static_cast<double>(out[t * row + c])));
    }
  }
  return gap / scale;
}

const std::vector<std::int64_t> kShuffle = {3, 0, 5, 1, 4, 2};  // "this is awesome" reordered

TEST(AttentionSeed000, WithoutPositionsPermutingTokensPermutesOutputs) {
  const Problem p = fixed_problem(6, 2, 8);
  // Double accumulation rounded once: the two orders differ by at most an ulp of the output.
  EXPECT_LE(equivariance_gap(p, kShuffle, [](Problem&) {}), 2 * kEps32);
}

TEST(AttentionSeed000, SinusoidalLearnedAndRotaryPositionsBreakIt) {
  const Problem p = fixed_problem(6, 2, 8);
  const int d_model = 2 * 8;
  const std::vector<std::int64_t> slots = {0, 1, 2, 3, 4, 5};
  const auto add_table = [&](Problem& x, const std::vector<float>& table) {
    for (auto* t : {&x.q, &x.k, &x.v}) {
      for (std::size_t j = 0; j < t->size(); ++j) (*t)[j] += table[j];
    }
  };
  const auto sinusoidal = find_sinusoidal("sinusoidal/formula")->table({d_model, 10000.0}, slots);
  EXPECT_GT(equivariance_gap(p, kShuffle, [&](Problem& x) { add_table(x, sinusoidal); }), 1e-3);
  const auto learned = LearnedPositionTable(6, d_model, 11).lookup(slots);
  EXPECT_GT(equivariance_gap(p, kShuffle, [&](Problem& x) { add_table(x, learned); }), 1e-3);
  const RopeSpec spec{8, 8, 10000.0, Layout::interleaved, AnglePrecision::fp64};
  const auto rotary = [&](Problem& x) {
    find_rope("kernel/scalar")->apply(spec, HeadTensor{x.q, 6, 2, 8}, HeadTensor{x.k, 6, 2, 8}, slots);
  };
  EXPECT_GT(equivariance_gap(p, kShuffle, rotary), 1e-3);
  // Seed 001's attention bug: the rotated q and k are overwritten by unrotated ones (an `else`
  // lost), so the positions vanish and the order no longer matters: this mutant must be caught.
  const auto forgets_to_rotate = [&](Problem& x) {
    Problem rotated = x;
    rotary(rotated);  // computed, then the unrotated q, k are used anyway
  };
  EXPECT_LE(equivariance_gap(p, kShuffle, forgets_to_rotate), 2 * kEps32)
      << "the unrotated-attention mutant should look position-blind";
}

RC_GTEST_PROP(AttentionRope, InvariantToShiftingAllPositions, ()) {
  // softmax(R_m q . R_n k) depends on n - m only: shifting every position by c leaves the output.
  Problem p = pick_problem();
  const auto& s = p.shape;
  const RopeSpec spec{s.head_dim, s.head_dim, 10000.0, Layout::interleaved, AnglePrecision::fp64};
  std::vector<std::int64_t> positions(static_cast<std::size_t>(s.tokens));
  std::iota(positions.begin(), positions.end(), *rc::gen::inRange<std::int64_t>(0, 1 << 20));
  const auto c = *rc::gen::inRange<std::int64_t>(-(1 << 20), 1 << 20);
  std::vector<std::int64_t> shifted(positions);
  for (auto& m : shifted) m += c;
  const RopeImpl& rope = *find_rope("kernel/scalar");
  Problem a = p, b = p;
  rope.apply(spec, HeadTensor{a.q, s.tokens, s.q_heads, s.head_dim}, HeadTensor{a.k, s.tokens, s.kv_heads, s.head_dim}, positions);
  rope.apply(spec, HeadTensor{b.q, s.tokens, s.q_heads, s.head_dim}, HeadTensor{b.k, s.tokens, s.kv_heads, s.head_dim}, shifted);
  const auto out_a = run(attention_naive, a), out_b = run(attention_naive, b);
  // Each rotated pair is off by <= kNormBoundUnits eps32 |pair| (fp64 angles), so each score by
  // <= scale * sum_c |q||k| * 2 kNormBoundUnits eps32 per side, both sides: Delta_i; the outputs
  // then differ by <= sum_j P_ij |v_j| * 2 Delta_i (softmax's relative sensitivity), <= 2 Delta_i
  // max|v| here, plus each output's rounding.
  const double scale = 1 / std::sqrt(static_cast<double>(s.head_dim));
  double max_v = 0;
  for (float x : p.v) max_v = std::max(max_v, static_cast<double>(std::abs(x)));
  const auto d = static_cast<std::size_t>(s.head_dim);
  for (std::int64_t i = 0; i < s.tokens; ++i) {
    for (std::int64_t h = 0; h < s.q_heads; ++h) {
      double delta = 0;
      for (std::int64_t j = 0; j < s.tokens; ++j) {
        double abs_dot = 0;
        for (std::size_t x = 0; x < d; ++x) {
          abs_dot += std::abs(static_cast<double>(p.q[static_cast<std::size_t>(i * s.q_heads + h) * d + x]) *
                              p.k[static_cast<std::size_t>(j * s.kv_heads + h / (s.q_heads / s.kv_heads)) * d + x]);
        }
        delta = std::max(delta, 2 * scale * abs_dot * 2 * kNormBoundUnits * kEps32 * (1 + kEps32));
      }
      for (std::size_t x = 0; x < d; ++x) {
        const std::size_t at = static_cast<std::size_t>(i * s.q_heads + h) * d + x;
        const double allowed = 2 * delta * max_v + kU * (std::abs(out_a[at]) + std::abs(out_b[at]));
        RC_ASSERT(std::abs(static_cast<double>(out_a[at]) - out_b[at]) <= allowed);
      }
    }
  }
}

RC_GTEST_PROP(AttentionCausal, LaterTokensDoNotChangeEarlierOutputs, ()) {
  Problem p = pick_problem();
  p.shape.causal = true;
  const auto cut = *rc::gen::inRange<std::int64_t>(0, p.shape.tokens);
  Problem changed = p;
  const auto kv_row = static_cast<std::size_t>(p.shape.kv_heads * p.shape.head_dim);
  const auto q_row = static_cast<std::size_t>(p.shape.q_heads * p.shape.head_dim);
  for (std::size_t j = static_cast<std::size_t>(cut + 1) * kv_row; j < changed.k.size(); ++j) {
    changed.k[j] = -changed.k[j] * 3 + 1;
    changed.v[j] = changed.v[j] * 5 - 2;
  }
  for (std::size_t j = static_cast<std::size_t>(cut + 1) * q_row; j < changed.q.size(); ++j) changed.q[j] += 1;
  for (auto attention : {attention_naive, static_cast<decltype(&attention_naive)>(
                                              [](const AttentionShape& s, std::span<const float> q,
                                                 std::span<const float> k, std::span<const float> v,
                                                 std::span<float> out) { attention_blas(s, q, k, v, out, 7); })}) {
    const auto before = run(attention, p), after = run(attention, changed);
    // Rows 0..cut are computed from keys and values 0..cut only: bit for bit the same.
    RC_ASSERT(std::equal(before.begin(), before.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(cut + 1) * q_row),
                         after.begin()));
  }
}

TEST(Softmax, RowsSumToOneAndStayFiniteForHugeLogits) {
  for (const std::int64_t n : {1, 7, 16, 17, 100}) {
    std::vector<float> row(static_cast<std::size_t>(n));
    for (std::size_t j = 0; j < row.size(); ++j) row[j] = (j % 3 == 0 ? 1e30f : -1e30f) * static_cast<float>(j + 1) / static_cast<float>(n);
    softmax_row(row.data(), n);
    double sum = 0;
    for (float x : row) {
      ASSERT_TRUE(std::isfinite(x));
      ASSERT_GE(x, 0.0f);
      sum += x;
    }
    EXPECT_NEAR(sum, 1.0, gamma(static_cast<double>(n)) + 4 * kU) << n;
  }
  std::vector<float> one_hot = {0.0f, 1e30f, 5.0f};
  softmax_row(one_hot.data(), 3);
  EXPECT_EQ(one_hot, (std::vector<float>{0.0f, 1.0f, 0.0f}));
}

TEST(Softmax, FullyMaskedRowIsZeros) {
  std::vector<float> masked(19, -INFINITY);
  softmax_row(masked.data(), 19);
  for (float x : masked) EXPECT_EQ(x, 0.0f);
}

TEST(AttentionBadInput, Refused) {
  std::vector<float> x(2 * 2 * 4), out(2 * 2 * 4);
  EXPECT_THROW(attention_blas({2, 2, 0, 4, true}, x, x, x, out), InvalidInput);
  EXPECT_THROW(attention_blas({2, 3, 2, 4, true}, x, x, x, out), InvalidInput);
  EXPECT_THROW(attention_naive({2, 2, 2, 4, true}, x, std::span<const float>(x).first(3), x, out), InvalidInput);
  EXPECT_THROW(attention_blas({2, 2, 2, 4, true}, x, x, x, out, 0), InvalidInput);
}

}  // namespace
}  // namespace ropecheck
