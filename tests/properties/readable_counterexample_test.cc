// The check every failure's counterexample is held to (tests/support/readable_counterexample.h)
// can fail: each thing a porter cannot read, put into a readable counterexample, is named.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/readable_counterexample.h"

namespace ropecheck {
namespace {

const std::string kCall =
    "the call that failed: kernel/avx2: tokens=2 heads=1 kv_heads=1 threads=3 positions=[7, 8]\n"
    "  spec: head_dim=4 rotary_dim=4 base=10000 layout=interleaved angles=fp64\n";
const std::string kDrawn = "values the case drew:\n  tokens: 2\n  threads: 3\n";

TEST(ReadableCounterexample, TheCallAndNamedValuesPass) {
  EXPECT_EQ(test::unreadable_counterexample("q: error 3 > bound 2", kCall + kDrawn, true), "");
  const std::string long_positions =
      "call 2 of 2, the last before the failure: plugin/x: tokens=4096 heads=32 kv_heads=8 threads=13 "
      "positions=[0, 1, 2, 3, 4, 5, 6, 7, ..., 4092, 4093, 4094, 4095] (4096 positions, 0 to 4095)\n"
      "  spec: head_dim=128 rotary_dim=128 base=500000 layout=half_split angles=fp32\n";
  EXPECT_EQ(test::unreadable_counterexample("", long_positions, true), "");
}

TEST(ReadableCounterexample, EachUnreadablePartIsNamed) {
  const auto unreadable = [](const std::string& message, const std::string& example, bool rope = true) {
    return test::unreadable_counterexample(message, example, rope);
  };
  EXPECT_NE(unreadable("", kCall + "values the case drew:\n  long: 1\n"), "");
  EXPECT_NE(unreadable("", kCall + "values the case drew:\n  unsigned long: 1\n"), "");
  EXPECT_NE(unreadable("", kCall + "values the case drew:\n  ropecheck::RopeSpec: head_dim=2\n"), "");
  EXPECT_NE(unreadable("", kCall + "values the case drew:\n  std::vector<float>: [1]\n"), "");
  EXPECT_NE(unreadable("", kCall + "values the case drew:\n  boundary shape: <\?\?\?>\n"), "");
  EXPECT_NE(unreadable("got 1, want 2 (rope_harness.cc:26)", kCall + kDrawn), "");
  EXPECT_NE(unreadable("", kDrawn), "");  // a RoPE failure without its call
  const std::string no_threads =
      "the call that failed: kernel/avx2: tokens=2 heads=1 kv_heads=1 positions=[7, 8]\n"
      "  spec: head_dim=4 rotary_dim=4 base=10000 layout=interleaved angles=fp64\n";
  EXPECT_NE(unreadable("", no_threads + kDrawn), "");
  EXPECT_EQ(unreadable("", kDrawn, false), "");  // sinusoidal and attention draws have no call
}

}  // namespace
}  // namespace ropecheck
