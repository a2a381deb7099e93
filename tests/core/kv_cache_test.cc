// core/kv_cache.h: the paged cache's indices against the layouts as the engines write them, and
// every way a cache or a slot list can be wrong named as bad input.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/kv_cache.h"

namespace ropecheck {
namespace {

KvCacheSpec small_cache(CacheLayout layout) {
  KvCacheSpec spec;
  spec.layout = layout;
  spec.blocks = 3;
  spec.block_size = 4;
  spec.kv_heads = layout == CacheLayout::mla ? 1 : 2;
  spec.head_dim = 6;
  spec.latent_dim = layout == CacheLayout::mla ? 5 : 0;
  return spec;
}

// The index as a nested array of the layout's shape would have it, written out per layout.
std::int64_t nested_index(const KvCacheSpec& s, std::int64_t slot, std::int64_t head, std::int64_t feature) {
  const std::int64_t block = slot / s.block_size, offset = slot % s.block_size, f = row_features(s);
  switch (s.layout) {
    case CacheLayout::nhd: return block * (s.block_size * s.kv_heads * f) + offset * (s.kv_heads * f) + head * f + feature;
    case CacheLayout::hnd: return block * (s.kv_heads * s.block_size * f) + head * (s.block_size * f) + offset * f + feature;
    case CacheLayout::mla: return block * (s.block_size * f) + offset * f + feature;
  }
  return -1;
}

class KvCacheLayouts : public testing::TestWithParam<CacheLayout> {};

TEST_P(KvCacheLayouts, EveryElementHasOneIndexInTheLayoutsShape) {
  const KvCacheSpec spec = small_cache(GetParam());
  ASSERT_NO_THROW(validate_cache(spec));
  std::vector<int> hits(static_cast<std::size_t>(cache_elements(spec)), 0);
  for (std::int64_t slot = 0; slot < cache_slots(spec); ++slot) {
    for (std::int64_t head = 0; head < spec.kv_heads; ++head) {
      for (std::int64_t feature = 0; feature < row_features(spec); ++feature) {
        const std::int64_t index = cache_index(spec, slot, head, feature);
        ASSERT_EQ(index, nested_index(spec, slot, head, feature)) << slot << " " << head << " " << feature;
        ++hits.at(static_cast<std::size_t>(index));
      }
    }
  }
  for (const int h : hits) EXPECT_EQ(h, 1);
}

INSTANTIATE_TEST_SUITE_P(Layouts, KvCacheLayouts, testing::Values(CacheLayout::nhd, CacheLayout::hnd, CacheLayout::mla),
                         [](const testing::TestParamInfo<CacheLayout>& info) { return std::string(to_string(info.param)); });

// The two layouts differ where a bug would hide: the HND stride on an NHD cache moves the row.
TEST(KvCache, NhdAndHndPlaceTheSameRowApart) {
  const KvCacheSpec nhd = small_cache(CacheLayout::nhd), hnd = small_cache(CacheLayout::hnd);
  EXPECT_EQ(cache_index(nhd, 5, 1, 0), (1 * 4 + 1) * 2 * 6 + 1 * 6);  // block 1, offset 1, head 1
  EXPECT_EQ(cache_index(hnd, 5, 1, 0), ((1 * 2 + 1) * 4 + 1) * 6);
  EXPECT_NE(cache_index(nhd, 5, 1, 0), cache_index(hnd, 5, 1, 0));
}

void expect_invalid(const KvCacheSpec& spec, const std::string& part) {
  try {
    validate_cache(spec);
    ADD_FAILURE() << "accepted; expected a message with '" << part << "'";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(KvCache, ImpossibleCachesAreBadInputSayingWhat) {
  KvCacheSpec spec = small_cache(CacheLayout::nhd);
  spec.block_size = 0;
  expect_invalid(spec, "block_size 0");
  spec = small_cache(CacheLayout::mla);
  spec.kv_heads = 2;
  expect_invalid(spec, "kv_heads 2 must be 1");
  spec = small_cache(CacheLayout::nhd);
  spec.latent_dim = 4;
  expect_invalid(spec, "mla layout's");
  spec = small_cache(CacheLayout::nhd);
  spec.storage = CacheStorage::fp8_e4m3;
  expect_invalid(spec, "0 k scales");
  spec.k_scale = {1.0f};
  spec.v_scale = {1.0f, 2.0f, 3.0f};
  expect_invalid(spec, "3 v scales");
  spec.v_scale = {0.0f};
  expect_invalid(spec, "v scale 0 is 0");
  spec.v_scale = {std::numeric_limits<float>::quiet_NaN()};
  expect_invalid(spec, "finite and positive");
  spec = small_cache(CacheLayout::nhd);
  spec.k_scale = {0.5f};
  expect_invalid(spec, "for FP8 storage, not fp32");
  spec = small_cache(CacheLayout::mla);
  spec.storage = CacheStorage::fp8_e5m2;
  spec.k_scale = {0.5f};
  EXPECT_NO_THROW(validate_cache(spec));
  spec.v_scale = {0.5f};
  expect_invalid(spec, "v_scale must be empty");
  spec = small_cache(CacheLayout::nhd);
  spec.blocks = std::int64_t{1} << 40;
  spec.block_size = std::int64_t{1} << 20;
  expect_invalid(spec, "overflow");
}

TEST(KvCache, ASlotPastTheCacheOrWrittenTwiceIsBadInputAndPaddingIsNot) {
  const KvCacheSpec spec = small_cache(CacheLayout::nhd);
  EXPECT_NO_THROW(validate_slots(spec, std::vector<std::int64_t>{-1, 11, 0, -1, 4}));
  try {
    validate_slots(spec, std::vector<std::int64_t>{0, 12});
    ADD_FAILURE() << "slot 12 of 12 accepted";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("token 1's slot 12 is past the cache's 12 slots"), std::string::npos) << e.what();
  }
  try {
    validate_slots(spec, std::vector<std::int64_t>{3, -1, 3});
    ADD_FAILURE() << "slot 3 twice accepted";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("tokens 0 and 2 both write slot 3"), std::string::npos) << e.what();
  }
}

// validate_slots takes valid slots in increasing order in one walk and sorts the others: a
// repeat next to itself in an otherwise increasing run must still be caught, by either path.
// (Seen failing with the walk's `slot > last` made `>=`: {2, 5, 5, 7} was accepted.)
TEST(KvCache, ARepeatedSlotIsCaughtInIncreasingAndShuffledOrder) {
  const KvCacheSpec spec = small_cache(CacheLayout::nhd);
  EXPECT_NO_THROW(validate_slots(spec, std::vector<std::int64_t>{-1, 0, 1, -1, 5, 11}));
  EXPECT_NO_THROW(validate_slots(spec, std::vector<std::int64_t>{}));
  const auto expect_repeat = [&](std::vector<std::int64_t> slots, const std::string& names) {
    try {
      validate_slots(spec, slots);
      ADD_FAILURE() << names << " accepted";
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
    }
  };
  expect_repeat({2, 5, 5, 7}, "tokens 1 and 2 both write slot 5");
  expect_repeat({-1, 2, -1, 2}, "tokens 1 and 3 both write slot 2");
  expect_repeat({9, 4, 6, 4, 9}, "tokens 1 and 3 both write slot 4");
}

TEST(KvCache, ScalesPerTensorPerHeadAndTheirDirection) {
  KvCacheSpec spec = small_cache(CacheLayout::nhd);
  EXPECT_EQ(cache_scale(spec, true, 1), 1.0);  // not FP8
  spec.storage = CacheStorage::fp8_e5m2;
  spec.k_scale = {0.5f, 0.25f};
  spec.v_scale = {2.0f};
  ASSERT_NO_THROW(validate_cache(spec));
  EXPECT_EQ(cache_scale(spec, true, 1), 0.25);
  EXPECT_EQ(cache_scale(spec, false, 1), 2.0);
  EXPECT_EQ(to_stored_domain(3.0, 0.25, ScaleDirection::multiply), 0.75);
  EXPECT_EQ(to_stored_domain(3.0, 0.25, ScaleDirection::divide), 12.0);
  EXPECT_EQ(from_stored_domain(to_stored_domain(3.0, 0.25, ScaleDirection::divide), 0.25, ScaleDirection::divide), 3.0);
  EXPECT_EQ(from_stored_domain(0.75, 0.25, ScaleDirection::multiply), 3.0);
}

}  // namespace
}  // namespace ropecheck
