// ABI 3 end to end: plugins/examples/mrope_rope.c (MRoPE, interleaved MRoPE and the 2D vision
// RoPE, ported from HF transformers) loaded in-process and verified through the real binary. The
// good port passes every RoPE property, the multi-axis ones included; each port bug (a section
// boundary, h and w swapped, Qwen3-VL's interleaving offset, mrope_section not doubled) fails
// verify with a counterexample whose call shows its positions per axis; ABI 1 and 2 plugins keep
// one axis, whatever ABI 2's reserved words hold.   ctest -R Mrope
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

const std::vector<AxisMode> kEveryMode = {AxisMode::none, AxisMode::mrope, AxisMode::imrope,
                                          AxisMode::vision};

// ---- in-process --------------------------------------------------------------------------------

TEST(MropePluginLoad, Abi3PluginDeclaresItsAxisModes) {
  const auto impl = load_plugin(built_plugin("mrope_rope"));
  EXPECT_EQ(impl->id(), "plugin/mrope_rope");
  ASSERT_NE(plugin_info(*impl), nullptr);
  EXPECT_EQ(plugin_info(*impl)->abi_version, ROPECHECK_PLUGIN_ABI_V3);
  EXPECT_EQ(impl->capabilities().axis_modes, kEveryMode);
  EXPECT_EQ(impl->capabilities().scaling_kinds, std::vector<ScalingKind>{ScalingKind::none});
}

// ABI 1 and 2 have one position a token: an ABI 2 library that fills axis_modes (its reserved0)
// is read as one axis, and ABI 1 and 2 examples as before.
TEST(MropePluginLoad, Abi1And2PluginsKeepOneAxisWhateverTheirReservedWordHolds) {
  for (const char* name : {"mrope_as_abi2_rope", "scaled_rope", "threaded_rope", "good_rope"}) {
    const auto impl = load_plugin(built_plugin(name));
    EXPECT_EQ(impl->capabilities().axis_modes, std::vector<AxisMode>{AxisMode::none}) << name;
  }
  EXPECT_EQ(plugin_info(*load_plugin(built_plugin("mrope_as_abi2_rope")))->abi_version, ROPECHECK_PLUGIN_ABI_V2);
}

// A problem of 4 tokens on `mode`'s axes: head_dim 64, 48 rotary features (24 pairs), every axis
// of a token at a position of its own, the last token's last axis at 4096 (the far end of the
// positions buffer: it holds tokens * axes entries).
Problem multi_axis_problem(AxisMode mode, Layout layout) {
  Problem p(64, layout, 48);
  switch (mode) {
    case AxisMode::none: return p;  // {0, 7, 4096, -3}
    case AxisMode::mrope:
      p.spec.axes = {mode, {6, 9, 9}};
      p.positions = {0, 0, 0, 3, 1, 2, 5, 9, 4, -3, 2, 4096};
      break;
    case AxisMode::imrope:
      p.spec.axes = {mode, {10, 7, 7}};
      p.positions = {0, 0, 0, 3, 1, 2, 5, 9, 4, -3, 2, 4096};
      break;
    case AxisMode::vision:
      p.spec.axes = {mode, {10, 14, 0}};
      p.positions = {0, 0, 1, 2, 9, 4, -3, 4096};
      break;
  }
  return p;
}

// The spec's axis mode, its sections and call->axes reach the kernel, and so do all tokens * axes
// positions: it agrees with the oracle on every mode, both layouts, GQA and partial rotary.
TEST(MropePluginLoad, Abi3PluginMatchesTheOracleOnEveryAxisMode) {
  const auto impl = load_plugin(built_plugin("mrope_rope"));
  for (const AxisMode mode : kEveryMode) {
    for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
      SCOPED_TRACE(fmt::format("{} {}", to_string(mode), to_string(layout)));
      Problem p = multi_axis_problem(mode, layout);
      test::expect_matches_oracle(*impl, p);
    }
  }
}

// The same source as ABI 2 returns ERROR unless call->axes is 0 and the spec has ABI 2's size;
// it rotates 1D specs as before, and a multi-axis spec never reaches it.
TEST(MropePluginLoad, Abi2PluginGetsAbi2sSpecAndCallAndNoAxes) {
  const auto impl = load_plugin(built_plugin("mrope_as_abi2_rope"));
  Problem p = multi_axis_problem(AxisMode::none, Layout::half_split);
  test::expect_matches_oracle(*impl, p);
  Problem mrope = multi_axis_problem(AxisMode::mrope, Layout::half_split);
  try {
    mrope.apply(*impl);
    FAIL() << "a multi-axis spec reached an ABI 2 plugin";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("mrope position axes not supported"), std::string::npos) << e.what();
  }
}

// ---- through the CLI ---------------------------------------------------------------------------

// Every RoPE property runs on the good port, at the build's model shapes too (the vision-language
// ones among them), and passes; only the scaling ones skip: it declares no frequency scaling.
TEST(MropePluginCli, Abi3PluginPassesTheWholeRopeCatalogue) {
  const auto v = verify_plugin("mrope_rope", {"--cases", "30", "--model-shapes", ROPECHECK_TEST_MODEL_SHAPES});
  EXPECT_EQ(v.run.code, 0) << v.run.out << v.run.err;
  const auto found = statuses(v.json, "plugin/mrope_rope");
  const std::set<std::string> need_scaling = {"linear_scaling_interpolates", "scaling_boundary"};
  for (const auto& id : rope_property_ids()) {
    ASSERT_TRUE(found.count(id)) << id << " not run\n" << v.run.out;
    const bool skipped = need_scaling.count(id) != 0 || test::judges_backward(id);
    EXPECT_EQ(found.at(id), skipped ? "SKIPPED" : "PASSED") << id << "\n" << v.run.out;
  }
}

// Loaded as ABI 2 it passes on one axis, and the multi-axis properties skip: the host gave it
// nothing it cannot read.
TEST(MropePluginCli, TheSamePortAsAbi2PassesOnOneAxis) {
  const auto v = verify_plugin("mrope_as_abi2_rope", {"--cases", "30", "--property", "oracle_agreement",
                                                      "--property", "relative_position", "--property",
                                                      "section_locality"});
  EXPECT_EQ(v.run.code, 0) << v.run.out << v.run.err;
  const auto found = statuses(v.json, "plugin/mrope_as_abi2_rope");
  EXPECT_EQ(found.at("oracle_agreement"), "PASSED") << v.run.out;
  EXPECT_EQ(found.at("relative_position"), "PASSED") << v.run.out;
  EXPECT_EQ(found.at("section_locality"), "SKIPPED") << v.run.out;
}

struct PortBug {
  const char* plugin;
  const char* spec;  // what the failing call's spec shows of the bug's case
};

class MropePortBug : public ::testing::TestWithParam<PortBug> {};

// Each bug fails `ropecheck verify --plugin` (default cases and threads: exit 1), and the failing
// call is the multi-axis one: its positions one (t,h,w) tuple a token, its spec the axes. On the
// truth and the multi-axis properties, without the model shapes: each bug is found in the random
// cases, and shrinking a plugin's failure through its worker at a 512-token shape, or at
// boundary_shapes' million values, took a minute and a half a bug.
TEST_P(MropePortBug, FailsVerifyOnAMultiAxisCall) {
  const PortBug& bug = GetParam();
  const auto v = verify_plugin(bug.plugin, {"--model-shapes", "none", "--property", "oracle_agreement", "--property",
                                            "section_locality", "--property", "axes_equal_is_1d"});
  ASSERT_EQ(v.run.code, 1) << v.run.out << v.run.err;
  const std::regex call(fmt::format("the call that failed: plugin/{}: tokens=[0-9]+ heads=[0-9]+ kv_heads=[0-9]+ "
                                    "threads=[0-9]+ positions\\(t,h,w\\)=\\[\\([-0-9]+,[-0-9]+,[-0-9]+\\)[^\\n]*\\n"
                                    " *spec: [^\\n]*{}",
                                    bug.plugin, bug.spec));
  EXPECT_TRUE(std::regex_search(v.run.out, call)) << bug.spec << "\n" << v.run.out;
  const auto found = statuses(v.json, std::string("plugin/") + bug.plugin);
  EXPECT_EQ(found.at("oracle_agreement"), "FAILED") << v.run.out;
}

const PortBug kPortBugs[] = {
    {"mrope_boundary_rope", "axes=mrope sections="},
    {"mrope_swapped_hw_rope", "axes=i?mrope sections="},
    {"imrope_offset_rope", "axes=imrope sections="},
    // Only half_split reads the second half of the tables, where the undoubled split goes wrong.
    {"mrope_undoubled_rope", "layout=half_split.*axes=mrope sections="},
};
INSTANTIATE_TEST_SUITE_P(Plugins, MropePortBug, ::testing::ValuesIn(kPortBugs),
                         [](const auto& info) { return std::string(info.param.plugin); });

// `list --plugin` shows the axis modes beside the scaling kinds, and so does every built-in's row.
TEST(MropePluginCli, ListShowsTheAxisModesOfPluginsAndBuiltIns) {
  const auto text = ropecheck_cli({"list", "--plugin", built_plugin("mrope_rope")});
  ASSERT_EQ(text.code, 0) << text.err;
  const auto row_at = text.out.find("plugin/mrope_rope");
  ASSERT_NE(row_at, std::string::npos) << text.out;
  const std::string row = text.out.substr(row_at, text.out.find('\n', row_at) - row_at);
  EXPECT_TRUE(std::regex_search(row, std::regex(" 3 .* none,mrope,imrope,vision "))) << row;
  const auto oracle_at = text.out.find("\noracle_f64/scalar ");
  ASSERT_NE(oracle_at, std::string::npos) << text.out;
  const std::string oracle = text.out.substr(oracle_at + 1, text.out.find('\n', oracle_at + 1) - oracle_at - 1);
  EXPECT_NE(oracle.find(" none,mrope,imrope,vision "), std::string::npos) << oracle;

  const auto json = ropecheck_cli({"list", "--json", "--plugin", built_plugin("mrope_rope"), "--plugin",
                                   built_plugin("scaled_rope")});
  ASSERT_EQ(json.code, 0) << json.err;
  const Json list = Json::parse(json.out);
  const auto& plugins = list.at("plugins");
  ASSERT_EQ(plugins.size(), 2u);
  EXPECT_EQ(plugins[0].at("capabilities").at("axis_modes"), Json::array({"none", "mrope", "imrope", "vision"}));
  EXPECT_EQ(plugins[0].at("capabilities").at("multi_axis"), true);
  EXPECT_EQ(plugins[1].at("capabilities").at("axis_modes"), Json::array({"none"}));
  EXPECT_EQ(plugins[1].at("capabilities").at("multi_axis"), false);
  // Every built-in says which modes it does; the oracle does them all.
  for (const auto& impl : list.at("rope_implementations")) {
    const auto& modes = impl.at("capabilities").at("axis_modes");
    ASSERT_FALSE(modes.empty()) << impl.at("id");
    EXPECT_EQ(modes[0], "none") << impl.at("id");
    if (impl.at("id").get<std::string>().starts_with("oracle_f64/")) {
      EXPECT_EQ(modes.size(), 4u) << impl.at("id");
    }
  }
}

}  // namespace
}  // namespace ropecheck
