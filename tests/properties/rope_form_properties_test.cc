// The call forms' properties (properties/rope_form_properties.cc): every one holds on every real
// form implementation; the cases reach what the engines' bugs need (every layout, storage and
// angle source; head strides unequal and not head_dim; k absent; the cache's last row; partial
// rotary; small heads, zero heads; many heads times many tokens); a failure names the call.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <set>

#include "impls/registry.h"
#include "properties/catalogue.h"
#include "properties/harness/guarded_apply.h"
#include "properties/harness/rope_form_cases.h"
#include "tests/support/draw_cases.h"
#include "tests/support/property_case.h"
#include "tests/support/test_config.h"

namespace ropecheck {
namespace {

using RopeFormCase_ = PropertyCase<RopeFormImpl>;

std::vector<RopeFormCase_> all_form_cases() {
  std::vector<RopeFormCase_> cases;
  for (const RopeFormImpl* impl : rope_form_implementations()) {
    for (const Property& property : rope_form_properties()) cases.push_back({impl, &property});
  }
  return cases;
}

Subject form_subject(const RopeFormImpl& impl, bool mutant = false) {
  return {std::string(impl.id()), nullptr, nullptr, mutant, nullptr, nullptr, &impl};
}

class RopeFormProperty : public ::testing::TestWithParam<RopeFormCase_> {};

TEST_P(RopeFormProperty, Holds) {
  const auto [impl, property] = GetParam();
  if (std::string why; !impl->available(&why)) GTEST_SKIP() << why;
  const auto result = run_property(*property, form_subject(*impl), test_run_config());
  ASSERT_NE(result.status, Status::skipped) << result.message;
  EXPECT_EQ(result.status, Status::passed) << describe_failure(result);
  EXPECT_GT(result.cases, 0);
}

INSTANTIATE_TEST_SUITE_P(ImplsAndProperties, RopeFormProperty, ::testing::ValuesIn(all_form_cases()),
                         property_case_name<RopeFormImpl>);

// What 300 drawn cases reach, counted.
struct FormReach {
  std::set<BufferLayout> layouts;
  std::set<StorageType> storages;
  std::set<AngleSource> sources;
  std::set<NormWeight> weights;
  std::set<double> eps;
  std::set<int> head_dims;
  int k_absent = 0, unequal_head_strides = 0, stride_not_head_dim = 0, last_cache_row = 0, partial = 0,
      wide = 0, small_heads = 0, threads = 0;
};

FormReach form_reach(FormCaseAim aim) {
  FormReach r;
  const RopeFormImpl& impl = *find_rope_form("form_reference/scalar");
  CallThreadsInForce threads(32);
  const bool drawn = test::draw_cases(300, 7, [&] {
    const RopeFormCase c = pick_rope_form_case(impl, aim);
    r.layouts.insert(c.layout);
    r.storages.insert(c.storage);
    r.sources.insert(c.angles);
    r.head_dims.insert(c.spec.head_dim);
    if (c.has_norm) {
      r.weights.insert(c.norm.weight);
      r.eps.insert(c.norm.eps);
    }
    r.k_absent += c.k.heads == 0;
    r.unequal_head_strides += c.k.heads > 1 && c.q.heads > 1 && c.k.head_stride != c.q.head_stride;
    r.stride_not_head_dim += c.q.head_stride != c.spec.head_dim;
    r.last_cache_row += c.angles == AngleSource::cos_sin_cache &&
                        std::count(c.positions.begin(), c.positions.end(), c.cache_rows - 1) > 0;
    r.partial += c.spec.rotary_dim < c.spec.head_dim;
    r.wide += c.tokens * c.q.heads >= 64;
    r.threads += c.threads > 1;
    const std::vector<float> q = gather_rows(c, c.buffer, c.q);
    r.small_heads += std::any_of(q.begin(), q.end(), [](float v) { return v != 0 && std::abs(v) < 0x1p-15f; });
  });
  EXPECT_TRUE(drawn);
  return r;
}

TEST(RopeFormCases, ReachEveryFormAndEveryShapeTheEnginesBugsNeed) {
  const FormReach r = form_reach(FormCaseAim::any);
  EXPECT_EQ(r.layouts.size(), 4u);
  EXPECT_EQ(r.storages.size(), 3u);
  EXPECT_EQ(r.sources.size(), 2u);
  EXPECT_EQ(r.weights.size(), 2u);
  EXPECT_EQ(r.eps, (std::set<double>{1e-6, 1e-5}));
  for (const int d : {64, 128, 256}) EXPECT_TRUE(r.head_dims.count(d)) << "head_dim " << d;
  EXPECT_GT(r.k_absent, 20) << "calls without k";
  EXPECT_GT(r.unequal_head_strides, 10) << "k's head stride not q's (SGLang #20559)";
  EXPECT_GT(r.stride_not_head_dim, 50) << "head strides past head_dim (MLA, padded heads)";
  EXPECT_GT(r.last_cache_row, 30) << "a position at the cos/sin cache's last row";
  EXPECT_GT(r.partial, 50) << "rotary_dim < head_dim";
  EXPECT_GT(r.wide, 20) << "many heads times many tokens (vLLM #51049's path)";
  EXPECT_GT(r.small_heads, 30) << "heads small enough that eps decides their norm";
  EXPECT_GT(r.threads, 50) << "calls split over threads";
}

TEST(RopeFormCases, CacheEdgeCasesReadTheFirstAndLastRows) {
  const FormReach r = form_reach(FormCaseAim::cache_edge);
  EXPECT_EQ(r.sources, (std::set<AngleSource>{AngleSource::cos_sin_cache}));
  EXPECT_GT(r.last_cache_row, 290);
}

// A failure reads as the call that failed: the layout, the views' strides, the norm's eps and
// weight convention, the angle source (issue 52).
TEST(RopeFormCases, AFailureNamesTheCall) {
  const RopeFormImpl& mutant = *find_rope_form("mutant/qk_norm_weight_convention_swapped");
  const auto result = run_property(*find_property("form_oracle_agreement"), form_subject(mutant, true),
                                   test_run_config());
  ASSERT_EQ(result.status, Status::failed);
  for (const char* part : {" layout: ", "token stride ", "head stride ", "qk_norm eps=", "weight=", "angles from the ",
                           " token ", " head ", " feature "}) {
    EXPECT_NE(result.message.find(part), std::string::npos) << part << " not in: " << result.message;
  }
}

}  // namespace
}  // namespace ropecheck
