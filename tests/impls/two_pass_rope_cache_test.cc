// rope_then_write: the fused form in two passes, in every layout, storage, scale direction and
// padding rule: each valid token's row holds its rotated k and its v narrowed as the cache's
// storage says, every other byte of the whole cache is as it was, a padding token's q follows its
// rule, FP8 saturates, and bad calls are bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/kv_cache.h"
#include "impls/fused/two_pass_rope_cache.h"
#include "impls/oracle/oracle_kv_cache.h"
#include "impls/registry.h"
#include "tests/support/fused_call.h"

namespace ropecheck {
namespace {

constexpr std::byte kUntouched{0x5A};  // every cache byte before the call

using Buffers = test::FusedCallBuffers;

// tests/support/fused_call.h's small call, its values up to `amplitude`, every cache byte kUntouched.
Buffers buffers(CacheLayout layout, CacheStorage storage, ScaleDirection direction, PaddingRule padding,
                float amplitude = 3.0f) {
  Buffers b = test::small_paged_call(layout, storage, direction, padding);
  const std::size_t v_dim = layout == CacheLayout::mla ? 6 : 8;
  const auto kv = static_cast<std::size_t>(b.cache.kv_heads);
  b.q = test::sine_values(static_cast<std::size_t>(b.tokens * b.q_heads * 8), 0.1f, 0.7f, amplitude);
  b.k = test::sine_values(static_cast<std::size_t>(b.tokens) * kv * 8, 0.2f, 0.7f, amplitude);
  b.v = test::sine_values(static_cast<std::size_t>(b.tokens) * kv * v_dim, 0.3f, 0.7f, amplitude);
  test::fill_caches_with(b, kUntouched);
  return b;
}

const RopeImpl& rope() {
  const RopeImpl* impl = find_rope("kernel/scalar");
  if (impl == nullptr) throw std::runtime_error("kernel/scalar is not registered");
  return *impl;
}

// What the two passes must leave in each element: the same RoPE's rotated k, or v, taken into the
// stored domain in fp32 and narrowed; the truth says which elements a valid slot addressed.
void expect_cache_as_defined(Buffers& b, const FusedCacheTruth& truth, const std::string& what) {
  const bool mla = b.cache.layout == CacheLayout::mla;
  std::vector<float> q = b.q, k = b.k;
  rope().apply(b.spec, HeadTensor{q, b.tokens, b.q_heads, 8}, HeadTensor{k, b.tokens, b.cache.kv_heads, 8},
               b.positions);
  const int bytes = element_bytes(b.cache.storage);
  std::vector<float> want(truth.written.size(), 0.0f), want_v(truth.written.size(), 0.0f);
  const std::int64_t v_dim = mla ? b.cache.latent_dim : 8;
  for (std::int64_t t = 0; t < b.tokens; ++t) {
    const std::int64_t slot = b.slots[static_cast<std::size_t>(t)];
    if (slot < 0) continue;
    for (std::int64_t h = 0; h < b.cache.kv_heads; ++h) {
      const auto scaled = [&](float x, bool of_k) {  // cache_scale is 1 where not FP8
        const auto s = static_cast<float>(cache_scale(b.cache, of_k, h));
        return b.cache.scale_direction == ScaleDirection::multiply ? x * s : x / s;
      };
      for (std::int64_t f = 0; f < 8; ++f) {
        want[static_cast<std::size_t>(cache_index(b.cache, slot, h, (mla ? b.cache.latent_dim : 0) + f))] =
            scaled(k[static_cast<std::size_t>((t * b.cache.kv_heads + h) * 8 + f)], true);
      }
      for (std::int64_t f = 0; f < v_dim; ++f) {
        (mla ? want : want_v)[static_cast<std::size_t>(cache_index(b.cache, slot, h, f))] =
            scaled(b.v[static_cast<std::size_t>((t * b.cache.kv_heads + h) * v_dim + f)], false);
      }
    }
  }
  std::vector<std::byte> expected(static_cast<std::size_t>(bytes));
  for (std::size_t i = 0; i < truth.written.size(); ++i) {
    for (const bool of_v : {false, true}) {
      if (of_v && mla) continue;
      const std::vector<std::byte>& got = of_v ? b.v_cache : b.k_cache;
      const std::byte* at = got.data() + i * static_cast<std::size_t>(bytes);
      if (!truth.written[i]) {
        for (int j = 0; j < bytes; ++j) ASSERT_EQ(at[j], kUntouched) << what << ": element " << i << " was not addressed";
        continue;
      }
      write_cache_element(b.cache.storage, expected, 0, (of_v ? want_v : want)[i]);
      ASSERT_EQ(std::memcmp(at, expected.data(), expected.size()), 0)
          << what << (of_v ? " v" : " k") << " element " << i << ": got "
          << read_cache_element(b.cache.storage, std::span<const std::byte>(got), static_cast<std::int64_t>(i))
          << ", want " << read_cache_element(b.cache.storage, expected, 0);
    }
  }
}

TEST(TwoPassRopeCache, EveryLayoutStorageDirectionAndPaddingRuleWritesWhatItMustAndNothingElse) {
  for (const CacheLayout layout : {CacheLayout::nhd, CacheLayout::hnd, CacheLayout::mla}) {
    for (const CacheStorage storage : {CacheStorage::fp32, CacheStorage::bf16, CacheStorage::fp16,
                                       CacheStorage::fp8_e4m3, CacheStorage::fp8_e5m2}) {
      for (const ScaleDirection direction : {ScaleDirection::multiply, ScaleDirection::divide}) {
        for (const PaddingRule padding : {PaddingRule::skip_token, PaddingRule::rotate_q_only}) {
          const std::string what = fmt::format("{} {} {} {}", to_string(layout), to_string(storage),
                                               to_string(direction), to_string(padding));
          Buffers b = buffers(layout, storage, direction, padding);
          const std::vector<float> q_before = b.q;
          const auto impl = make_two_pass_rope_cache(rope(), padding);
          impl->apply(b.call());
          const FusedCacheTruth truth =
              oracle_rope_and_cache(b.spec, b.cache, q_before, b.q_heads, b.k, b.v, b.tokens, b.positions, b.slots);
          expect_cache_as_defined(b, truth, what);
          // q: rotated as the RoPE rotates it, a padding token's left as it came under skip_token.
          std::vector<float> rotated = q_before, k_copy = b.k;
          rope().apply(b.spec, HeadTensor{rotated, b.tokens, b.q_heads, 8},
                       HeadTensor{k_copy, b.tokens, b.cache.kv_heads, 8}, b.positions);
          for (std::size_t i = 0; i < b.q.size(); ++i) {
            const bool padded = b.slots[i / static_cast<std::size_t>(b.q_heads * 8)] < 0;
            const float want = padded && padding == PaddingRule::skip_token ? q_before[i] : rotated[i];
            ASSERT_EQ(b.q[i], want) << what << " q element " << i;
          }
        }
      }
    }
  }
}

TEST(TwoPassRopeCache, Fp8SaturatesAtItsLargestValueAndNeverWritesInfOrNaN) {
  for (const CacheStorage storage : {CacheStorage::fp8_e4m3, CacheStorage::fp8_e5m2}) {
    Buffers b = buffers(CacheLayout::nhd, storage, ScaleDirection::divide, PaddingRule::skip_token, 1e6f);
    make_two_pass_rope_cache(rope())->apply(b.call());
    const float largest = storage == CacheStorage::fp8_e4m3 ? 448.0f : 57344.0f;
    int saturated = 0;
    for (const auto* cache : {&b.k_cache, &b.v_cache}) {
      for (std::int64_t i = 0; i < cache_elements(b.cache); ++i) {
        if ((*cache)[static_cast<std::size_t>(i)] == kUntouched) continue;
        const float x = read_cache_element(storage, *cache, i);
        ASSERT_TRUE(std::isfinite(x)) << to_string(storage) << " element " << i;
        ASSERT_LE(std::fabs(x), largest);
        saturated += std::fabs(x) == largest;
      }
    }
    EXPECT_GT(saturated, 0) << "values of 1e6 / 0.25 must reach the largest " << to_string(storage);
  }
}

TEST(TwoPassRopeCache, BadCallsAreBadInputSayingWhat) {
  const auto expect_invalid = [](Buffers b, const std::string& part, PaddingRule impl_rule = PaddingRule::skip_token) {
    try {
      make_two_pass_rope_cache(rope(), impl_rule)->apply(b.call());
      ADD_FAILURE() << "accepted; expected '" << part << "'";
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  Buffers b = buffers(CacheLayout::nhd, CacheStorage::fp16, ScaleDirection::divide, PaddingRule::skip_token);
  b.k_cache.pop_back();
  expect_invalid(b, "the k cache (bytes)");
  b = buffers(CacheLayout::hnd, CacheStorage::fp32, ScaleDirection::divide, PaddingRule::skip_token);
  b.v.pop_back();
  expect_invalid(b, "v has");
  b = buffers(CacheLayout::nhd, CacheStorage::fp32, ScaleDirection::divide, PaddingRule::rotate_q_only);
  expect_invalid(b, "padding tokens: skip_token, not rotate_q_only");
  b = buffers(CacheLayout::nhd, CacheStorage::fp32, ScaleDirection::divide, PaddingRule::skip_token);
  b.slots[0] = 99;
  expect_invalid(b, "slot 99 is past the cache's 16 slots");
}

}  // namespace
}  // namespace ropecheck
