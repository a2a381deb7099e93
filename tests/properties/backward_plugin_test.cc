// ABI 4 end to end: plugins/examples/backward_rope.c (a training kernel's forward and backward,
// the rotate-half form with the sine negated) loaded in-process and verified through the real
// binary. The good kernel passes every RoPE property, the five backward ones included; each
// backward bug (the sine not flipped, the attention factor left out, the tail's gradient zeroed)
// is killed by the backward properties whose statement it contradicts while its forward passes;
// an ABI 3 plugin, and an ABI 4 struct too short to hold apply_backward, have the forward only
// and skip them.   ctest -R BackwardPlugin
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <regex>
#include <set>
#include <string>
#include <vector>

#include "core/errors.h"
#include "plugins/host/plugin_host.h"
#include "ropecheck/plugin.h"
#include "tests/support/outside_problem.h"
#include "tests/support/plugin_cli.h"

namespace ropecheck {
namespace {

using test::built_plugin;
using test::Problem;
using test::rope_property_ids;
using test::ropecheck_cli;
using test::statuses;
using test::verify_plugin;
using Json = nlohmann::json;

const std::vector<Pass> kBothPasses = {Pass::forward, Pass::backward};
const std::vector<Pass> kForwardOnly = {Pass::forward};

// The ids of the backward properties, in catalogue order.
std::vector<std::string> backward_property_ids() {
  std::vector<std::string> ids;
  for (const auto& id : rope_property_ids()) {
    if (test::judges_backward(id)) ids.push_back(id);
  }
  return ids;
}

// ---- in-process --------------------------------------------------------------------------------

TEST(BackwardPluginLoad, Abi4PluginDeclaresBothPasses) {
  const auto impl = load_plugin(built_plugin("backward_rope"));
  EXPECT_EQ(impl->id(), "plugin/backward_rope");
  ASSERT_NE(plugin_info(*impl), nullptr);
  EXPECT_EQ(plugin_info(*impl)->abi_version, ROPECHECK_PLUGIN_ABI_V4);
  EXPECT_EQ(impl->capabilities().passes, kBothPasses);
  EXPECT_EQ(impl->capabilities().scaling_kinds.size(), std::size(kAllScalingKinds));
}

// An ABI 4 struct whose struct_size ends before apply_backward (the pointer is set behind it):
// the host never reads past struct_size, so the plugin has the forward only; ABI 3 likewise.
TEST(BackwardPluginLoad, NoBackwardWhereTheStructEndsBeforeItOrTheAbiPredatesIt) {
  const auto short_struct = load_plugin(built_plugin("backward_short_struct_rope"));
  EXPECT_EQ(plugin_info(*short_struct)->abi_version, ROPECHECK_PLUGIN_ABI_V4);
  EXPECT_EQ(short_struct->capabilities().passes, kForwardOnly);
  EXPECT_EQ(load_plugin(built_plugin("mrope_rope"))->capabilities().passes, kForwardOnly);
  EXPECT_EQ(load_plugin(built_plugin("scaled_rope"))->capabilities().passes, kForwardOnly);
  // A backward spec never reaches it: the implementation refuses the pass it lacks.
  Problem p(64, Layout::half_split, 48);
  p.spec.pass = Pass::backward;
  p.spec.angle_precision = AnglePrecision::fp64;
  try {
    p.apply(*short_struct);
    FAIL() << "a backward spec reached a plugin without apply_backward";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("the backward pass not implemented"), std::string::npos) << e.what();
  }
}

// The backward call reaches apply_backward with the spec's pass: both passes agree with the
// oracle on both layouts, GQA, partial rotary and a YaRN spec (attention factor 1.14 on both).
TEST(BackwardPluginLoad, BothPassesMatchTheOracle) {
  const auto impl = load_plugin(built_plugin("backward_rope"));
  for (const Pass pass : kBothPasses) {
    for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
      for (const bool yarn : {false, true}) {
        Problem p(64, layout, 48);
        p.spec.pass = pass;
        p.spec.angle_precision = AnglePrecision::fp64;
        if (yarn) {
          p.spec.scaling.kind = ScalingKind::yarn;
          p.spec.scaling.factor = 4;
          p.spec.scaling.original_max_position = 4096;
        }
        SCOPED_TRACE(describe(p.spec));
        test::expect_matches_oracle(*impl, p);
      }
    }
  }
}

// ---- through the CLI ---------------------------------------------------------------------------

// Every RoPE property runs on the good kernel at up to 4 threads, at the build's model shapes,
// and passes, the backward ones included; only the multi-axis ones skip (one axis declared).
TEST(BackwardPluginCli, Abi4PluginPassesTheWholeRopeCatalogue) {
  const auto v = verify_plugin("backward_rope", {"--cases", "30", "--plugin-threads", "4", "--threads", "4",
                                                 "--model-shapes", ROPECHECK_TEST_MODEL_SHAPES});
  EXPECT_EQ(v.run.code, 0) << v.run.out << v.run.err;
  const auto found = statuses(v.json, "plugin/backward_rope");
  const std::set<std::string> need_axes = {"axes_equal_is_1d", "section_locality"};
  for (const auto& id : rope_property_ids()) {
    ASSERT_TRUE(found.count(id)) << id << " not run\n" << v.run.out;
    EXPECT_EQ(found.at(id), need_axes.count(id) != 0 ? "SKIPPED" : "PASSED") << id << "\n" << v.run.out;
  }
  EXPECT_EQ(backward_property_ids().size(), 5u);
}

// Plugins without a backward keep loading: the backward properties skip with the reason, the
// forward ones run.
TEST(BackwardPluginCli, Abi3PluginAndAShortAbi4StructSkipTheBackwardProperties) {
  std::vector<std::string> args = {"--cases", "10", "--model-shapes", "none", "--plugin",
                                   built_plugin("backward_short_struct_rope"), "--property", "oracle_agreement"};
  for (const auto& id : backward_property_ids()) args.insert(args.end(), {"--property", id});
  const auto v = verify_plugin("mrope_rope", args);
  EXPECT_EQ(v.run.code, 0) << v.run.out << v.run.err;
  for (const char* subject : {"plugin/mrope_rope", "plugin/backward_short_struct_rope"}) {
    const auto found = statuses(v.json, subject);
    EXPECT_EQ(found.at("oracle_agreement"), "PASSED") << subject << "\n" << v.run.out;
    for (const auto& id : backward_property_ids()) {
      EXPECT_EQ(found.at(id), "SKIPPED") << subject << " " << id << "\n" << v.run.out;
    }
  }
  EXPECT_NE(v.run.out.find("no backward pass: it declares the forward only"), std::string::npos) << v.run.out;
}

struct BackwardBug {
  const char* plugin;
  std::vector<std::string> killed_by;  // mutant_kill_test.cc's required kills of the same bug
  friend void PrintTo(const BackwardBug& bug, std::ostream* out) { *out << bug.plugin; }
};

class BackwardPluginBug : public ::testing::TestWithParam<BackwardBug> {};

// Each bug fails verify (exit 1) on every backward property its statement contradicts, while the
// forward, right in every bug build, passes. Without the model shapes (shrinking through the
// worker at a 512-token shape costs a minute a bug), the backward properties and the forward's
// oracle agreement only.
TEST_P(BackwardPluginBug, IsKilledByTheBackwardPropertiesItContradicts) {
  const BackwardBug& bug = GetParam();
  std::vector<std::string> args = {"--model-shapes", "none", "--property", "oracle_agreement"};
  for (const auto& id : backward_property_ids()) args.insert(args.end(), {"--property", id});
  const auto v = verify_plugin(bug.plugin, args);
  ASSERT_EQ(v.run.code, 1) << v.run.out << v.run.err;
  const auto found = statuses(v.json, std::string("plugin/") + bug.plugin);
  EXPECT_EQ(found.at("oracle_agreement"), "PASSED") << v.run.out;
  for (const auto& id : bug.killed_by) EXPECT_EQ(found.at(id), "FAILED") << id << "\n" << v.run.out;
}

const BackwardBug kBackwardBugs[] = {
    {"backward_sin_not_flipped_rope", {"backward_oracle_agreement", "adjoint_identity", "backward_inverts_forward"}},
    {"backward_factor_dropped_rope",
     {"backward_oracle_agreement", "adjoint_identity", "backward_inverts_forward", "backward_norm_preservation"}},
    {"backward_tail_zeroed_rope", {"adjoint_identity", "backward_tail_untouched"}},
};
INSTANTIATE_TEST_SUITE_P(Plugins, BackwardPluginBug, ::testing::ValuesIn(kBackwardBugs),
                         [](const auto& info) { return std::string(info.param.plugin); });

// `list --plugin` shows PASSES forward,backward for an ABI 4 plugin with apply_backward, forward
// for the rest; its JSON lists the passes.
TEST(BackwardPluginCli, ListShowsThePassesOfEachPlugin) {
  const auto text = ropecheck_cli({"list", "--plugin", built_plugin("backward_rope"), "--plugin",
                                   built_plugin("backward_short_struct_rope"), "--plugin", built_plugin("mrope_rope")});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_TRUE(std::regex_search(text.out, std::regex("AXES +PASSES +PATH"))) << text.out;
  const auto row = [&](const std::string& id) {
    const auto at = text.out.find(id + " ");
    return at == std::string::npos ? std::string() : text.out.substr(at, text.out.find('\n', at) - at);
  };
  EXPECT_TRUE(std::regex_search(row("plugin/backward_rope"), std::regex(" 4 .* none +forward,backward +/"))) << text.out;
  EXPECT_TRUE(std::regex_search(row("plugin/backward_short_struct_rope"), std::regex(" 4 .* none +forward +/")))
      << text.out;
  EXPECT_TRUE(std::regex_search(row("plugin/mrope_rope"), std::regex(" 3 .* forward +/"))) << text.out;

  const auto json = ropecheck_cli({"list", "--json", "--plugin", built_plugin("backward_rope"), "--plugin",
                                   built_plugin("mrope_rope")});
  ASSERT_EQ(json.code, 0) << json.err;
  const Json list = Json::parse(json.out);
  const auto& plugins = list.at("plugins");
  ASSERT_EQ(plugins.size(), 2u);
  EXPECT_EQ(plugins[0].at("capabilities").at("passes"), Json::array({"forward", "backward"}));
  EXPECT_EQ(plugins[1].at("capabilities").at("passes"), Json::array({"forward"}));
}

}  // namespace
}  // namespace ropecheck
