// oracle_rope_and_cache: the fused call's truth puts each valid token's rotated k and its v, in the
// stored domain, at the rows its slot addresses in each layout, touches nothing else, leaves a
// padding token's q as its rule says, and names bad shapes and slots.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/kv_cache.h"
#include "impls/oracle/oracle.h"
#include "impls/oracle/oracle_kv_cache.h"
#include "tests/support/fused_call.h"

namespace ropecheck {
namespace {

using FusedCall = test::FusedCallBuffers;  // its caches unused: the oracle makes its own

std::vector<float> ramp(std::size_t n, float start) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = start + 0.37f * static_cast<float>(i % 29) - 0.011f * static_cast<float>(i);
  return x;
}

// tests/support/fused_call.h's small call (slots across a block boundary, sharing a block, with
// gaps, out of order, two padding) in e4m3 with its scales, divided, and ramp values.
FusedCall small_call(CacheLayout layout) {
  FusedCall c = test::small_paged_call(layout, CacheStorage::fp8_e4m3);
  const std::int64_t v_dim = layout == CacheLayout::mla ? 6 : 8;
  c.q = ramp(static_cast<std::size_t>(c.tokens * c.q_heads * 8), -1.0f);
  c.k = ramp(static_cast<std::size_t>(c.tokens * c.cache.kv_heads * 8), 0.5f);
  c.v = ramp(static_cast<std::size_t>(c.tokens * c.cache.kv_heads * v_dim), 2.0f);
  return c;
}

FusedCacheTruth truth_of(const FusedCall& c) {
  return oracle_rope_and_cache(c.spec, c.cache, c.q, c.q_heads, c.k, c.v, c.tokens, c.positions, c.slots);
}

class OracleKvCache : public testing::TestWithParam<CacheLayout> {};

TEST_P(OracleKvCache, EachValidTokensRowsHoldItsRotatedKAndItsVScaledAndNothingElseIsWritten) {
  const FusedCall c = small_call(GetParam());
  const bool mla = GetParam() == CacheLayout::mla;
  const FusedCacheTruth truth = truth_of(c);
  const std::vector<double> k_rotated = oracle_rope(c.spec, c.k, c.tokens, c.cache.kv_heads, c.positions);
  const std::int64_t v_dim = mla ? c.cache.latent_dim : c.cache.head_dim;
  std::vector<bool> expected_written(truth.written.size(), false);
  for (std::int64_t t = 0; t < c.tokens; ++t) {
    const std::int64_t slot = c.slots[static_cast<std::size_t>(t)];
    if (slot < 0) continue;
    for (std::int64_t h = 0; h < c.cache.kv_heads; ++h) {
      const double k_scale = c.cache.k_scale.size() == 1 ? c.cache.k_scale[0] : c.cache.k_scale[static_cast<std::size_t>(h)];
      const double v_scale = mla ? k_scale : c.cache.v_scale[0];
      for (std::int64_t f = 0; f < c.cache.head_dim; ++f) {
        const auto at = static_cast<std::size_t>(cache_index(c.cache, slot, h, (mla ? c.cache.latent_dim : 0) + f));
        EXPECT_EQ(truth.k_cache[at], k_rotated[static_cast<std::size_t>((t * c.cache.kv_heads + h) * 8 + f)] / k_scale);
        expected_written[at] = true;
      }
      for (std::int64_t f = 0; f < v_dim; ++f) {
        const auto at = static_cast<std::size_t>(cache_index(c.cache, slot, h, f));
        const double want = c.v[static_cast<std::size_t>((t * c.cache.kv_heads + h) * v_dim + f)] / v_scale;
        EXPECT_EQ((mla ? truth.k_cache : truth.v_cache)[at], want) << t << " " << h << " " << f;
        expected_written[at] = true;
      }
    }
  }
  EXPECT_EQ(truth.written, expected_written);
  for (std::size_t i = 0; i < truth.written.size(); ++i) {
    if (truth.written[i]) continue;
    EXPECT_EQ(truth.k_cache[i], 0.0) << i;
    if (!mla) {
      EXPECT_EQ(truth.v_cache[i], 0.0) << i;
    }
  }
  EXPECT_EQ(truth.v_cache.empty(), mla);
}

INSTANTIATE_TEST_SUITE_P(Layouts, OracleKvCache, testing::Values(CacheLayout::nhd, CacheLayout::hnd, CacheLayout::mla),
                         [](const testing::TestParamInfo<CacheLayout>& info) { return std::string(to_string(info.param)); });

TEST(OracleKvCache, APaddingTokensQIsLeftOrRotatedAsItsRuleSays) {
  FusedCall c = small_call(CacheLayout::nhd);
  const std::vector<double> rotated = oracle_rope(c.spec, c.q, c.tokens, c.q_heads, c.positions);
  const auto row = static_cast<std::size_t>(c.q_heads * 8);
  for (const PaddingRule rule : {PaddingRule::skip_token, PaddingRule::rotate_q_only}) {
    c.cache.padding = rule;
    const FusedCacheTruth truth = truth_of(c);
    for (std::size_t t = 0; t < static_cast<std::size_t>(c.tokens); ++t) {
      const bool left = c.slots[t] < 0 && rule == PaddingRule::skip_token;
      for (std::size_t i = t * row; i < (t + 1) * row; ++i) {
        EXPECT_EQ(truth.q[i], left ? static_cast<double>(c.q[i]) : rotated[i]) << to_string(rule) << " token " << t;
      }
    }
  }
}

TEST(OracleKvCache, MismatchedShapesAndBadSlotsAreBadInput) {
  FusedCall c = small_call(CacheLayout::nhd);
  c.v.pop_back();
  EXPECT_THROW(truth_of(c), InvalidInput);
  c = small_call(CacheLayout::nhd);
  c.slots.pop_back();
  EXPECT_THROW(truth_of(c), InvalidInput);
  c = small_call(CacheLayout::nhd);
  c.slots[0] = 16;  // past 4 blocks of 4
  EXPECT_THROW(truth_of(c), InvalidInput);
  c = small_call(CacheLayout::nhd);
  c.slots[1] = 9;  // twice
  EXPECT_THROW(truth_of(c), InvalidInput);
  c = small_call(CacheLayout::nhd);
  c.cache.head_dim = 6;
  EXPECT_THROW(truth_of(c), InvalidInput);
}

}  // namespace
}  // namespace ropecheck
