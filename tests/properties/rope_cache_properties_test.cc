// The fused cache call's properties (properties/rope_cache_properties.cc): every one holds on
// every real fused implementation; the cases reach what the engines' bugs need (every layout,
// storage, direction and block size; slots across blocks, in shared blocks, with gaps, out of
// order, padding of every kind; FP8 past its largest); a failure names the call.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <map>
#include <set>

#include "impls/registry.h"
#include "properties/catalogue.h"
#include "properties/harness/rope_cache_cases.h"
#include "tests/support/draw_cases.h"
#include "tests/support/property_case.h"
#include "tests/support/test_config.h"

namespace ropecheck {
namespace {

using RopeCacheCase_ = PropertyCase<RopeCacheImpl>;

std::vector<RopeCacheCase_> all_cases() {
  std::vector<RopeCacheCase_> cases;
  for (const RopeCacheImpl* impl : rope_cache_implementations()) {
    for (const Property& property : rope_cache_properties()) cases.push_back({impl, &property});
  }
  return cases;
}

class RopeCacheProperty : public ::testing::TestWithParam<RopeCacheCase_> {};

TEST_P(RopeCacheProperty, Holds) {
  const auto [impl, property] = GetParam();
  if (std::string why; !impl->available(&why)) GTEST_SKIP() << why;
  const Subject subject{std::string(impl->id()), nullptr, nullptr, false, nullptr, impl};
  const auto result = run_property(*property, subject, test_run_config());
  ASSERT_NE(result.status, Status::skipped) << result.message;
  EXPECT_EQ(result.status, Status::passed) << describe_failure(result);
  EXPECT_GT(result.cases, 0);
}

INSTANTIATE_TEST_SUITE_P(ImplsAndProperties, RopeCacheProperty, ::testing::ValuesIn(all_cases()),
                         property_case_name<RopeCacheImpl>);

// What 300 drawn cases reach, counted.
struct Reach {
  std::set<CacheLayout> layouts;
  std::set<CacheStorage> storages;
  std::set<ScaleDirection> directions;
  std::set<std::int64_t> block_sizes;
  int crossing = 0, shared_block = 0, gaps = 0, out_of_order = 0, minus_one = 0, other_padding = 0,
      per_head_scales = 0, saturating = 0, last_slot_written = 0;
};

Reach reach_of(CacheCaseAim aim) {
  Reach r;
  const RopeCacheImpl& impl = *find_rope_cache("rope_then_write/scalar");
  const bool drawn = test::draw_cases(300, 7, [&] {
    const RopeCacheCase c = pick_rope_cache_case(impl, aim);
    r.layouts.insert(c.cache.layout);
    r.storages.insert(c.cache.storage);
    if (is_fp8(c.cache.storage)) r.directions.insert(c.cache.scale_direction);
    r.block_sizes.insert(c.cache.block_size);
    std::vector<std::int64_t> valid;
    for (const std::int64_t s : c.slots) {
      if (s >= 0) valid.push_back(s);
      r.minus_one += s == -1;
      r.other_padding += s < -1;
    }
    r.out_of_order += !std::is_sorted(valid.begin(), valid.end());
    r.last_slot_written += std::count(valid.begin(), valid.end(), cache_slots(c.cache) - 1) > 0;
    std::vector<std::int64_t> sorted = valid;
    std::sort(sorted.begin(), sorted.end());
    std::map<std::int64_t, int> per_block;
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      ++per_block[sorted[i] / c.cache.block_size];
      if (i > 0 && sorted[i] == sorted[i - 1] + 1 && sorted[i] % c.cache.block_size == 0) ++r.crossing;
      if (i > 0 && sorted[i] > sorted[i - 1] + 1) ++r.gaps;
    }
    r.shared_block += std::any_of(per_block.begin(), per_block.end(), [](const auto& b) { return b.second > 1; });
    r.per_head_scales += c.cache.k_scale.size() > 1;
    const FusedCacheTruth truth = truth_of(c);
    const double largest = c.cache.storage == CacheStorage::fp8_e4m3 ? 448 : 57344;
    r.saturating += is_fp8(c.cache.storage) &&
                    std::any_of(truth.k_cache.begin(), truth.k_cache.end(), [&](double y) { return std::abs(y) > largest; });
  });
  EXPECT_TRUE(drawn);
  return r;
}

TEST(RopeCacheCases, ReachEveryModeAndEverySlotPatternTheEnginesBugsNeed) {
  const Reach r = reach_of(CacheCaseAim::any);
  EXPECT_EQ(r.layouts.size(), 3u);
  EXPECT_EQ(r.storages.size(), 5u);
  EXPECT_EQ(r.directions.size(), 2u);
  EXPECT_EQ(r.block_sizes, (std::set<std::int64_t>{16, 32, 64, 128}));
  EXPECT_GT(r.crossing, 10) << "slots that cross a block boundary";
  EXPECT_GT(r.shared_block, 100) << "blocks holding more than one token";
  EXPECT_GT(r.gaps, 100) << "slots with gaps between them";
  EXPECT_GT(r.out_of_order, 50) << "slots out of order";
  EXPECT_GT(r.minus_one, 50) << "padding as -1";
  EXPECT_GT(r.per_head_scales, 10);
  // The last block stays free: slot -1 taken as an index lands where no valid token wrote.
  EXPECT_EQ(r.last_slot_written, 0);
}

TEST(RopeCacheCases, PaddingCasesSendEveryKindOfNegativeSlot) {
  const Reach r = reach_of(CacheCaseAim::padding);
  EXPECT_GT(r.minus_one, 300);
  EXPECT_GT(r.other_padding, 20) << "slots below -1 are padding too";
}

TEST(RopeCacheCases, SaturatingCasesCarryValuesPastTheFormatsLargest) {
  const Reach r = reach_of(CacheCaseAim::saturating);
  EXPECT_EQ(r.storages, (std::set<CacheStorage>{CacheStorage::fp8_e4m3, CacheStorage::fp8_e5m2}));
  EXPECT_GT(r.saturating, 200);  // of 300: the rest are all padding, or a zero-only tensor
}

// A failure reads as the call that failed: the slots, the block size, the layout, the storage, the
// scale and its direction (issue 56).
TEST(RopeCacheCases, AFailureNamesTheCall) {
  const Subject mutant{"mutant/cache_scale_direction_flipped", nullptr, nullptr, true, nullptr,
                       find_rope_cache("mutant/cache_scale_direction_flipped")};
  const auto result = run_property(*find_property("cache_oracle_agreement"), mutant, test_run_config());
  ASSERT_EQ(result.status, Status::failed);
  for (const char* part : {"slots [", "block_size ", "layout ", "fp8_e", " scale ", "d, padding"}) {
    EXPECT_NE(result.message.find(part), std::string::npos) << part << " not in: " << result.message;
  }
}

}  // namespace
}  // namespace ropecheck
