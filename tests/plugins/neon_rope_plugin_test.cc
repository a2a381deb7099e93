// `ropecheck verify` on a hand-written aarch64 NEON kernel (plugins/examples/neon_rope.c), as an
// ARM porter runs it: the correct kernel passes every RoPE property an ABI 1 plugin runs; its
// build with the interleaved store's zip halves swapped (neon_rope_lane_order) fails verify, on
// the properties whose statement a pair moved to another pair's place contradicts. aarch64 builds
// only (the plugins are built there alone); under the cross-build's emulator, test::spawn starts
// the CLI through it.
#if defined(__aarch64__)

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "tests/support/plugin_cli.h"
#include "tests/support/test_process.h"

namespace ropecheck {
namespace {

// The whole RoPE catalogue on 30 cases, no model shapes (test::spawn's environment), as the other
// example plugins' catalogue tests run it.
test::Verified verify_neon(const std::string& library) { return test::verify_plugin(library, {"--cases", "30"}); }

TEST(NeonRopePlugin, TheCorrectKernelPassesTheWholeRopeCatalogue) {
  const auto v = verify_neon("neon_rope");
  EXPECT_EQ(v.run.code, 0) << v.run.out << v.run.err;
  const auto found = test::statuses(v.json, "plugin/neon_rope");
  // An ABI 1 plugin: no frequency scaling, one position axis, the forward only.
  const std::set<std::string> skipped = {"linear_scaling_interpolates", "scaling_boundary", "axes_equal_is_1d",
                                         "section_locality"};
  for (const auto& id : test::rope_property_ids()) {
    ASSERT_TRUE(found.count(id)) << id << " not run\n" << v.run.out;
    const bool skips = skipped.count(id) != 0 || test::judges_backward(id);
    EXPECT_EQ(found.at(id), skips ? "SKIPPED" : "PASSED") << id << "\n" << v.run.out;
  }
}

// Verify's printed block of one failed property: its FAILED line up to its __REPRO line.
std::string failure_block(const std::string& out, const std::string& library, const std::string& property) {
  const auto start = out.find("FAILED   plugin/" + library + "  " + property + " ");
  if (start == std::string::npos) return "";
  const auto repro = out.find("__REPRO: ", start);
  return out.substr(start, repro == std::string::npos ? std::string::npos : out.find('\n', repro) - start);
}

// Pairs i, i+1 of each block of four hold pairs i+2, i+3's results: the rotation no longer agrees
// with the oracle, and at position 0 no longer leaves the row as it was. The tail is never
// written, and the half-split path has no lanes to reorder: oracle_agreement's shrunk
// counterexample is interleaved, one whole block of four pairs (rotary_dim 8).
TEST(NeonRopePlugin, TheLaneOrderBugFailsVerifyOnTheInterleavedLayout) {
  const std::string library = "neon_rope_lane_order";
  const auto v = verify_neon(library);
  EXPECT_EQ(v.run.code, 1) << v.run.out << v.run.err;
  const auto found = test::statuses(v.json, "plugin/" + library);
  for (const std::string property : {"oracle_agreement", "identity_at_zero"}) {
    ASSERT_TRUE(found.count(property)) << property << " not run\n" << v.run.out;
    EXPECT_EQ(found.at(property), "FAILED") << property << "\n" << v.run.out;
    const std::string block = failure_block(v.run.out, library, property);
    EXPECT_TRUE(test::contains(block, "counterexample:")) << property << "\n" << v.run.out;
    EXPECT_TRUE(test::contains(block, "layout=interleaved")) << block;
    EXPECT_TRUE(test::contains(block, "rotary_dim=8 ")) << block;
  }
  EXPECT_EQ(found.at("tail_untouched"), "PASSED") << v.run.out;
}

}  // namespace
}  // namespace ropecheck

#endif  // __aarch64__
