// Attention: every attention property of the catalogue (properties/attention_properties.cc) on
// every attention implementation; seed 000 with sinusoidal and learned positions; a softmax that
// stays finite for logits of 1e30 and defines fully masked rows; bad input.
#include <cblas.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <thread>

#include <functional>

#include "impls/sinusoidal/absolute_encoding.h"
#include "core/errors.h"
#include "impls/attention/attention.h"
#include "impls/registry.h"
#include "core/tolerance.h"
#include "properties/catalogue.h"
#include "tests/support/property_case.h"
#include "tests/support/test_config.h"

namespace ropecheck {
namespace {

using AttentionCase = PropertyCase<AttentionImpl>;

std::vector<AttentionCase> all_attention_cases() {
  std::vector<AttentionCase> cases;
  for (const AttentionImpl* impl : attention_implementations()) {
    for (const Property& property : attention_properties()) cases.push_back({impl, &property});
  }
  return cases;
}

class AttentionProperty : public ::testing::TestWithParam<AttentionCase> {};

TEST_P(AttentionProperty, Holds) {
  const auto [impl, property] = GetParam();
  // A softmax level this CPU lacks is reported skipped with the reason, never silently passed.
  if (std::string why; !impl->available(&why)) GTEST_SKIP() << why;
  const Subject subject{std::string(impl->id()), nullptr, nullptr, false, impl};
  const auto result = run_property(*property, subject, test_run_config());
  ASSERT_NE(result.status, Status::skipped) << result.message;
  EXPECT_EQ(result.status, Status::passed) << describe_failure(result);
  EXPECT_GT(result.cases, 0);
}

INSTANTIATE_TEST_SUITE_P(ImplsAndProperties, AttentionProperty, ::testing::ValuesIn(all_attention_cases()),
                         property_case_name<AttentionImpl>);

TEST(AttentionSeed000, SinusoidalAndLearnedPositionsBreakEquivariance) {
  // Seed 000 with absolute encodings added to the token vectors (RoPE: the catalogue property).
  const std::int64_t tokens = 6;
  const int heads = 2, d = 8, d_model = heads * d;
  AttentionShape shape{tokens, heads, heads, d, false};
  std::vector<float> x(static_cast<std::size_t>(tokens * d_model));
  for (std::size_t j = 0; j < x.size(); ++j) x[j] = std::sin(0.7f * static_cast<float>(j) + 0.3f);
  const std::vector<std::int64_t> slots = {0, 1, 2, 3, 4, 5}, order = {3, 0, 5, 1, 4, 2};
  const auto gap = [&](const std::vector<float>& table) {
    // q = k = v = x + PE(slot): the encoding follows the slot, not the token.
    std::vector<float> a(x), b(x.size());
    for (std::size_t t = 0; t < 6; ++t) {
      std::copy_n(x.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(order[t]) * d_model), d_model,
                  b.begin() + static_cast<std::ptrdiff_t>(t * d_model));
    }
    for (std::size_t j = 0; j < a.size(); ++j) {
      a[j] += table[j];
      b[j] += table[j];
    }
    std::vector<float> out_a(a.size()), out_b(b.size());
    attention_naive(shape, a, a, a, out_a);
    attention_naive(shape, b, b, b, out_b);
    double g = 0;
    for (std::size_t t = 0; t < 6; ++t) {
      for (int c = 0; c < d_model; ++c) {
        g = std::max(g, std::abs(static_cast<double>(out_b[t * d_model + static_cast<std::size_t>(c)]) -
                                 out_a[static_cast<std::size_t>(order[t]) * d_model + static_cast<std::size_t>(c)]));
      }
    }
    return g;
  };
  EXPECT_LE(gap(std::vector<float>(x.size(), 0.0f)), 2 * kEps32) << "no positions: equivariant";
  EXPECT_GT(gap(find_sinusoidal("sinusoidal/formula")->table({d_model, 10000.0}, slots)), 1e-3);
  EXPECT_GT(gap(LearnedPositionTable(6, d_model, 11).lookup(slots)), 1e-3);
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
    EXPECT_NEAR(sum, 1.0, gamma32(static_cast<double>(n)) + 4 * kUnitRoundoff32) << n;
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

// attention_blas and its fused form share (head, block) tasks over a team: any team size, and
// tasks per member from all to none, must give the bits of one thread (every task computed
// alone, the same way), for a causal and a full mask, grouped-query heads, a short last block.
// A dropped, repeated or racing task shows as a difference.
TEST(AttentionTeam, AnyTeamGivesTheBitsOfOneThread) {
  const RopeSpec rope{16, 16, 10000.0, Layout::interleaved, AnglePrecision::fp64, {}, {}};
  for (const bool causal : {true, false}) {
    const AttentionShape shape{61, 6, 2, 16, causal};
    const auto n = [&](std::int64_t heads) { return static_cast<std::size_t>(shape.tokens * heads * shape.head_dim); };
    std::vector<float> q(n(6)), k(n(2)), v(n(2));
    for (std::size_t j = 0; j < q.size(); ++j) q[j] = std::sin(0.7f * static_cast<float>(j));
    for (std::size_t j = 0; j < k.size(); ++j) k[j] = std::cos(0.3f * static_cast<float>(j));
    for (std::size_t j = 0; j < v.size(); ++j) v[j] = std::sin(1.3f * static_cast<float>(j) + 0.5f);
    std::vector<std::int64_t> positions(static_cast<std::size_t>(shape.tokens));
    std::iota(positions.begin(), positions.end(), 100);
    const auto run = [&](int threads, bool fused) {
      std::vector<float> out(n(6), -1.0f);
      const AttentionWork work{.block_rows = 7, .strip_rows = 3, .threads = threads};
      if (fused) {
        attention_blas_rope_fused(shape, rope, positions, q, k, v, out, work);
      } else {
        attention_blas(shape, q, k, v, out, work);
      }
      return out;
    };
    for (const bool fused : {false, true}) {
      const std::vector<float> alone = run(1, fused);
      for (const int threads : {2, 3, 8, 40}) {  // 40: more members than a fused call's 9 tasks
        EXPECT_EQ(run(threads, fused), alone) << (causal ? "causal" : "full") << (fused ? " fused" : "")
                                              << ", " << threads << " threads";
      }
    }
  }
}

// Two callers at once, each with a team (the hold is process-wide: the first parks OpenBLAS's
// pool, the last restores its count): the bits of one thread, no hang, the count restored.
TEST(AttentionTeam, CallersAtOnceShareTheHold) {
  const int before = openblas_get_num_threads();
  const AttentionShape shape{45, 4, 2, 8, true};
  std::vector<float> q(45 * 4 * 8), kv(45 * 2 * 8);
  for (std::size_t j = 0; j < q.size(); ++j) q[j] = std::sin(0.11f * static_cast<float>(j));
  for (std::size_t j = 0; j < kv.size(); ++j) kv[j] = std::cos(0.23f * static_cast<float>(j));
  std::vector<float> alone(q.size());
  attention_blas(shape, q, kv, kv, alone, {.block_rows = 5});
  std::vector<std::vector<float>> got(2, std::vector<float>(q.size()));
  std::vector<int> equal(2, 0);
  {
    std::vector<std::jthread> callers;
    for (std::size_t c = 0; c < 2; ++c) {
      callers.emplace_back([&, c] {
        for (int call = 0; call < 20; ++call) {
          attention_blas(shape, q, kv, kv, got[c], {.block_rows = 5, .threads = 2});
          equal[c] += got[c] == alone;
        }
      });
    }
  }
  EXPECT_EQ(equal, (std::vector<int>{20, 20}));
  EXPECT_EQ(openblas_get_num_threads(), before);
}

TEST(AttentionTeam, OpenBlasThreadCountIsRestored) {
  const int before = openblas_get_num_threads();
  const AttentionShape shape{20, 2, 2, 8, true};
  std::vector<float> x(20 * 2 * 8, 0.5f), out(x.size());
  for (const int threads : {1, 2}) {
    attention_blas(shape, x, x, x, out, {.block_rows = 4, .threads = threads});
    EXPECT_EQ(openblas_get_num_threads(), before) << threads << " threads";
  }
  EXPECT_THROW(attention_blas(shape, x, x, x, out, {.threads = 0}), InvalidInput);
  EXPECT_EQ(openblas_get_num_threads(), before) << "after a refused call";
}

// Without a block height the length chooses one (attention.h block_rows_for): a multiple of 64
// within [128, 256], growing with the length; and the call is the one with that height given.
TEST(AttentionBlocks, TheLengthChoosesTheHeight) {
  EXPECT_EQ(block_rows_for(1), 128);
  EXPECT_EQ(block_rows_for(512), 128);
  EXPECT_EQ(block_rows_for(1024), 128);
  EXPECT_EQ(block_rows_for(2048), 256);
  EXPECT_EQ(block_rows_for(4096), 256);
  EXPECT_EQ(block_rows_for(std::int64_t{1} << 40), 256);
  for (std::int64_t t = 1, last = 0; t <= (1 << 16); t += 1 + t / 7) {
    const std::int64_t rows = block_rows_for(t);
    EXPECT_TRUE(rows % 64 == 0 && rows >= 128 && rows <= 256 && rows >= last) << t << " tokens: " << rows;
    last = rows;
  }
  for (const std::int64_t tokens : {std::int64_t{300}, std::int64_t{2100}}) {
    const AttentionShape shape{tokens, 2, 1, 8, true};
    std::vector<float> q(static_cast<std::size_t>(tokens * 2 * 8)), kv(static_cast<std::size_t>(tokens * 8));
    for (std::size_t j = 0; j < q.size(); ++j) q[j] = std::sin(0.37f * static_cast<float>(j));
    for (std::size_t j = 0; j < kv.size(); ++j) kv[j] = std::cos(0.19f * static_cast<float>(j));
    std::vector<float> chosen(q.size(), -1.0f), given(q.size(), -2.0f);
    attention_blas(shape, q, kv, kv, chosen);
    attention_blas(shape, q, kv, kv, given, {.block_rows = block_rows_for(tokens)});
    EXPECT_EQ(chosen, given) << tokens << " tokens";
  }
}

// The error model of an F16 KV cache (core/tolerance.h, properties/attention_properties.cc) on a
// correct implementation of it: K and V rounded to fp16 once, then attention_blas in fp32. Every
// attention property holds within it, so a peer that fails one does more than store K and V in
// fp16.
class Fp16KvCache final : public AttentionImpl {
 public:
  std::string_view id() const override { return "test/fp16_kv_cache"; }
  std::string_view summary() const override { return "K and V rounded to fp16 once, then attention_blas"; }
  StorageType kv_storage() const override { return StorageType::fp16; }

 protected:
  void attend(const AttentionShape& shape, std::span<const float> q, std::span<const float> k,
              std::span<const float> v, std::span<float> out, int threads) const override {
    std::vector<float> k16(k.begin(), k.end()), v16(v.begin(), v.end());
    for (float& x : k16) x = round_to_storage(x, StorageType::fp16);
    for (float& x : v16) x = round_to_storage(x, StorageType::fp16);
    attention_blas(shape, q, k16, v16, out, {.block_rows = 7, .strip_rows = 3, .threads = threads});
  }
};

TEST(AttentionFp16KvCache, EveryAttentionPropertyHoldsWithinTheF16KvBound) {
  const Fp16KvCache cache;
  const Subject subject{"test/fp16_kv_cache", nullptr, nullptr, false, &cache};
  for (const Property& property : attention_properties()) {
    const auto result = run_property(property, subject, test_run_config());
    EXPECT_EQ(result.status, Status::passed) << property.id << ": " << describe_failure(result);
    if (result.units.ends_with("bound")) {
      EXPECT_EQ(result.units, "fp16 K,V bound") << property.id;
    }
  }
}

TEST(AttentionBadInput, Refused) {
  std::vector<float> x(2 * 2 * 4), out(2 * 2 * 4);
  EXPECT_THROW(attention_blas({2, 2, 0, 4, true}, x, x, x, out), InvalidInput);
  EXPECT_THROW(attention_blas({2, 3, 2, 4, true}, x, x, x, out), InvalidInput);
  EXPECT_THROW(attention_naive({2, 2, 2, 4, true}, x, std::span<const float>(x).first(3), x, out), InvalidInput);
  EXPECT_THROW(attention_blas({2, 2, 2, 4, true}, x, x, x, out, {.block_rows = -1}), InvalidInput);
  EXPECT_THROW(attention_blas({2, 2, 2, 4, true}, x, x, x, out, {.strip_rows = -1}), InvalidInput);
  EXPECT_THROW(attention_blas({2, 2, 2, 4, true}, x, x, x, out, {.threads = 0}), InvalidInput);
  EXPECT_THROW(attention_blas({2, 2, 2, 4, true}, x, x, x, out, {.threads = kMaxAttentionThreads + 1}),
               InvalidInput);
}

}  // namespace
}  // namespace ropecheck
