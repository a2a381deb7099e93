// check_property() (properties/harness/rapidcheck_bridge.h) on a property with a known answer:
// x in [0, 1000] observed against a bound of 100 fails for every x > 100, and RapidCheck shrinks
// any failure to x = 101. The result row must carry that shrunk case's numbers, the ones its
// message and counterexample show, and name the first failing case's beside them.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <string>

#include "properties/harness/rapidcheck_bridge.h"
#include "properties/property.h"

namespace ropecheck {
namespace {

PropertyResult run_threshold_property(ErrorTracker& tracker, bool shrink) {
  const Subject subject{"fake/subject", nullptr, nullptr, false, nullptr};
  RunConfig config;
  config.property_id = "below_one_hundred";
  config.shrink = shrink;
  return check_property(subject, config, "units", tracker, [&] {
    const int x = *rc::gen::inRange(0, 1001);
    tracker.observe(x, 100.0);
    RC_ASSERT(x <= 100);
  });
}

TEST(RapidCheckBridge, AFailedPropertyReportsTheShrunkCaseItsMessageShows) {
  ErrorTracker tracker;
  const PropertyResult result = run_threshold_property(tracker, /*shrink=*/true);
  ASSERT_EQ(result.status, Status::failed);
  EXPECT_NE(result.counterexample.find("101"), std::string::npos) << result.counterexample;
  EXPECT_DOUBLE_EQ(result.worst_ratio, 1.01);  // 101 / 100, not the worst case seen
  EXPECT_DOUBLE_EQ(result.worst_error, 101);
  EXPECT_DOUBLE_EQ(result.bound, 100);
  // The first failing case came before shrinking, and the message names it.
  ASSERT_GT(tracker.failing_cases, 1);
  EXPECT_GT(tracker.first_failing.ratio, 1.01);
  EXPECT_GE(tracker.worst.ratio, tracker.first_failing.ratio);
  EXPECT_NE(result.message.find("first failing case"), std::string::npos) << result.message;
}

TEST(RapidCheckBridge, WithoutShrinkingTheFirstFailingCaseIsTheOneReported) {
  ErrorTracker tracker;
  const PropertyResult result = run_threshold_property(tracker, /*shrink=*/false);
  ASSERT_EQ(result.status, Status::failed);
  // The failing case, and RapidCheck's second run of it that collects the counterexample.
  EXPECT_LE(tracker.failing_cases, 2);
  EXPECT_DOUBLE_EQ(tracker.last_failing.ratio, tracker.first_failing.ratio);
  EXPECT_DOUBLE_EQ(result.worst_ratio, tracker.first_failing.ratio);
  EXPECT_GT(result.worst_ratio, 1.0);
  EXPECT_EQ(result.message.find("first failing case"), std::string::npos) << result.message;
}

TEST(RapidCheckBridge, APassingPropertyReportsItsWorstCase) {
  ErrorTracker tracker;
  const Subject subject{"fake/subject", nullptr, nullptr, false, nullptr};
  RunConfig config;
  config.property_id = "always_within";
  const auto result = check_property(subject, config, "units", tracker, [&] {
    const int x = *rc::gen::inRange(0, 101);
    tracker.observe(x, 100.0);
    RC_ASSERT(x <= 100);
  });
  ASSERT_EQ(result.status, Status::passed) << result.message;
  EXPECT_EQ(tracker.failing_cases, 0);
  EXPECT_DOUBLE_EQ(result.worst_ratio, tracker.worst.ratio);
  EXPECT_LE(result.worst_ratio, 1.0);
}

}  // namespace
}  // namespace ropecheck
