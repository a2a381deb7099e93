// Every RoPE property on every real RoPE implementation in the registry, one gtest each
// (ImplsAndProperties/RopeProperty.Holds/<impl>__<property>). A failure prints the shrunk
// counterexample and the RC_PARAMS string that replays it:
//   RC_PARAMS="reproduce=..." ctest -R '<impl>__<property>'
#include <gtest/gtest.h>

#include "properties/catalogue.h"
#include "impls/registry.h"
#include "tests/support/property_case.h"
#include "tests/support/test_config.h"

namespace ropecheck {
namespace {

using RopeCase = PropertyCase<RopeImpl>;

std::vector<RopeCase> all_rope_cases() {
  std::vector<RopeCase> cases;
  for (const RopeImpl* impl : rope_implementations()) {
    for (const Property& property : property_catalogue()) {
      if (property.kind != SubjectKind::rope) continue;
      // Layout equivalence needs both layouts; an implementation of one (HF's half-split form)
      // has nothing to compare, and the property says so by skipping.
      if (property.id == std::string_view("layout_equivalence") &&
          impl->capabilities().layouts.size() < 2) {
        continue;
      }
      cases.push_back({impl, &property});
    }
  }
  return cases;
}

class RopeProperty : public ::testing::TestWithParam<RopeCase> {};

TEST_P(RopeProperty, Holds) {
  const auto [impl, property] = GetParam();
  // A level this CPU lacks is reported skipped with the reason, never silently passed.
  if (!impl->capabilities().available) GTEST_SKIP() << impl->capabilities().unavailable_reason;
  const Subject subject{std::string(impl->id()), impl, nullptr, false, nullptr};
  const auto result = run_property(*property, subject, test_run_config());
  ASSERT_NE(result.status, Status::skipped) << result.message;
  EXPECT_EQ(result.status, Status::passed) << describe_failure(result);
  EXPECT_GT(result.cases, 0);
  EXPECT_LE(result.worst_ratio, 1.0);
  RecordProperty("worst_ratio", std::to_string(result.worst_ratio));
}

INSTANTIATE_TEST_SUITE_P(ImplsAndProperties, RopeProperty, ::testing::ValuesIn(all_rope_cases()),
                         property_case_name<RopeImpl>);

}  // namespace
}  // namespace ropecheck
