// The plugin ABI end to end: the example plugins (examples/plugin/, built into
// ROPECHECK_PLUGIN_DIR) loaded in-process through load_plugin() and verified through the real
// binary (ROPECHECK_CLI_PATH): the good one (and fp16_rope, on fp16 storage, and ABI 2's
// scaled_rope with every scaling kind) passes everything, the broken one (and
// fp16_truncating_rope, llama3_unsmoothed_rope) fails with a counterexample, the crashing,
// hanging and overflowing ones FAIL without killing ropecheck, and the unloadable ones exit 2.   ctest -R Plugin   (or build/tests/properties_tests --gtest_filter='Plugin*')
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "properties/harness/rope_harness.h"
#include "properties/property.h"
#include "properties/verify/repro.h"
#include "core/errors.h"
#include "impls/oracle/oracle.h"
#include "ropecheck/plugin.h"
#include "plugins/host/plugin_host.h"
#include "core/storage.h"
#include "core/tolerance.h"
#include "tests/support/outside_problem.h"
#include "tests/support/plugin_cli.h"
#include "tests/support/test_process.h"

namespace ropecheck {
namespace {

using test::built_plugin;
using test::failure_of;
using test::Problem;
using test::ScratchDir;
using test::spawn;
using test::ropecheck_cli;
using test::rope_property_ids;
using test::statuses;
using test::verify_plugin;
using Json = nlohmann::json;

// ---- in-process: load_plugin() and the implementation it returns ------------------------------

std::string load_error(const std::string& path, PluginOptions options = {}) {
  try {
    load_plugin(path, options);
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "";
}

TEST(PluginLoad, GoodPluginBecomesPluginGoodRopeWithItsDeclaredCapabilities) {
  const auto impl = load_plugin(built_plugin("good_rope"));
  EXPECT_EQ(impl->id(), "plugin/good_rope");
  const auto caps = impl->capabilities();
  EXPECT_EQ(caps.layouts, (std::vector<Layout>{Layout::interleaved, Layout::half_split}));
  EXPECT_EQ(caps.angle_precisions, std::vector<AnglePrecision>{AnglePrecision::fp64});
  EXPECT_TRUE(caps.partial_rotary);
  EXPECT_EQ(caps.storage, StorageType::fp32);
  ASSERT_NE(plugin_info(*impl), nullptr);
  EXPECT_EQ(plugin_info(*impl)->abi_version, 1u);
  EXPECT_EQ(plugin_info(*impl)->name, "good_rope");
}

TEST(PluginLoad, GoodPluginMatchesTheOracleWithGqaPartialRotaryAndQAlone) {
  const auto impl = load_plugin(built_plugin("good_rope"));
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    Problem p(96, layout, 64);
    test::expect_matches_oracle(*impl, p);
    // The single-tensor form sends k with no heads: nothing may be written there.
    Problem alone(96, layout, 64);
    const auto tokens = static_cast<std::int64_t>(alone.positions.size());
    impl->apply(alone.spec, HeadTensor{alone.q, tokens, alone.q_heads, 96}, alone.positions);
    for (std::size_t i = 0; i < alone.q.size(); ++i) ASSERT_EQ(alone.q[i], p.q[i]) << i;
  }
}

TEST(PluginLoad, Fp16OnlyPluginIsJudgedAsFp16Storage) {
  const auto impl = load_plugin(built_plugin("fp16_rope"));
  EXPECT_EQ(impl->id(), "plugin/fp16_rope");
  EXPECT_EQ(impl->capabilities().storage, StorageType::fp16);
  ASSERT_NE(plugin_info(*impl), nullptr);
  EXPECT_EQ(plugin_info(*impl)->dtypes, ROPECHECK_DTYPE_FP16);
  EXPECT_EQ(load_plugin(built_plugin("good_rope"))->capabilities().storage, StorageType::fp32);
}

// fp32 tensors in (the properties' way): rounded to fp16, rotated by apply_fp16, widened back.
// Against the oracle on the fp16-rounded input, each result is off by at most one fp16 rounding
// (2^-11 relative, 2^-25 absolute under 2^-14) and one fp32 one; and it is an fp16 value.
TEST(PluginLoad, Fp16PluginRotatesThroughFp16StorageWithinOneRounding) {
  const auto impl = load_plugin(built_plugin("fp16_rope"));
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    Problem p(96, layout, 64);
    // Scaled from 2^-20 (fp16 subnormals: absolute rounding) up to about 0.2 along the tensor.
    for (auto* x : {&p.q, &p.k}) {
      for (float& v : *x) v *= 0x1p-13f * static_cast<float>(&v - x->data()) + 0x1p-20f;
    }
    const auto tokens = static_cast<std::int64_t>(p.positions.size());
    auto rounded_q = p.q, rounded_k = p.k;
    for (auto* x : {&rounded_q, &rounded_k}) {
      for (float& v : *x) v = round_to_storage(v, StorageType::fp16);
    }
    const auto want_q = oracle_rope(p.spec, rounded_q, tokens, p.q_heads, p.positions);
    const auto want_k = oracle_rope(p.spec, rounded_k, tokens, p.k_heads, p.positions);
    p.apply(*impl);
    const auto check = [](const std::vector<float>& got, const std::vector<double>& want) {
      for (std::size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i], round_to_storage(got[i], StorageType::fp16)) << i;
        ASSERT_LE(std::abs(got[i] - want[i]), (0x1p-11 + 0x1p-22) * std::abs(want[i]) + 0x1p-25)
            << i << ": " << got[i] << " vs " << want[i];
      }
    };
    check(p.q, want_q);
    check(p.k, want_k);

    // apply_fp16 (fp16 in and out) is the same call without the conversions: same bits.
    std::vector<Fp16> q16(rounded_q.size()), k16(rounded_k.size());
    std::transform(rounded_q.begin(), rounded_q.end(), q16.begin(), fp16_from_float);
    std::transform(rounded_k.begin(), rounded_k.end(), k16.begin(), fp16_from_float);
    impl->apply_fp16(p.spec, Fp16HeadTensor{q16, tokens, p.q_heads, p.spec.head_dim},
                     Fp16HeadTensor{k16, tokens, p.k_heads, p.spec.head_dim}, p.positions);
    for (std::size_t i = 0; i < q16.size(); ++i) ASSERT_EQ(float_from_fp16(q16[i]), p.q[i]) << i;
    for (std::size_t i = 0; i < k16.size(); ++i) ASSERT_EQ(float_from_fp16(k16[i]), p.k[i]) << i;
  }
}

TEST(PluginLoad, Abi2PluginDeclaresItsScalingKindsAndSaysWhatItsInitChose) {
  PluginOptions options;
  options.threads = 3;
  const auto impl = load_plugin(built_plugin("scaled_rope"), options);
  EXPECT_EQ(impl->id(), "plugin/scaled_rope");
  ASSERT_NE(plugin_info(*impl), nullptr);
  EXPECT_EQ(plugin_info(*impl)->abi_version, 2u);
  // init saw max_threads = --plugin-threads.
  EXPECT_NE(plugin_info(*impl)->description.find("up to 3 threads"), std::string::npos)
      << plugin_info(*impl)->description;
  const auto caps = impl->capabilities();
  for (const ScalingKind kind : kAllScalingKinds) EXPECT_TRUE(caps.implements(kind)) << to_string(kind);
  // An ABI 1 plugin: unscaled only.
  const auto good = load_plugin(built_plugin("good_rope"));
  EXPECT_EQ(good->capabilities().scaling_kinds, std::vector<ScalingKind>{ScalingKind::none});
}

// Every scaling parameter and the attention factor reach the kernel: an ABI 2 plugin agrees with
// the oracle on a spec of each kind, within the fp64-angle bound.
TEST(PluginLoad, Abi2PluginRotatesEveryScalingKindAsTheOracle) {
  const auto impl = load_plugin(built_plugin("scaled_rope"));
  for (const ScalingKind kind : kAllScalingKinds) {
    Problem p(64, Layout::interleaved, 48);
    p.spec.base = 500000.0;
    RopeScaling& s = p.spec.scaling;
    s.kind = kind;
    s.factor = kind == ScalingKind::none ? 1.0 : 8.0;
    s.original_max_position = 4096;
    s.sequence_length = 6000;  // past L: dynamic NTK grows, LongRoPE takes its long factors
    if (kind == ScalingKind::longrope) {  // rotary_dim/2 = 24 entries each
      s.short_factor.assign(24, 1.5);
      for (int i = 0; i < 24; ++i) s.long_factor.push_back(1.0 + 0.5 * i);
    }
    const auto tokens = static_cast<std::int64_t>(p.positions.size());
    const auto want = oracle_rope(p.spec, p.q, tokens, p.q_heads, p.positions);
    const std::vector<float> input = p.q;
    p.apply(*impl);
    const auto model = error_model(p.spec, StorageType::fp32);
    const auto worst = worst_rotary_error(
        p.spec, StorageType::fp32, input, p.q, want, p.q_heads, p.positions,
        [&](std::size_t t, double theta, int pair) {
          return rotation_bound_units(model, p.positions[t], theta, pair);
        });
    EXPECT_LE(worst.ratio, 1.0) << to_string(kind) << ": " << worst.where;
  }
}

TEST(PluginLoad, UnloadablePluginsAreInvalidInputNamingTheProblem) {
  EXPECT_NE(load_error(built_plugin("no_such_plugin")).find("no such file"), std::string::npos);
  EXPECT_NE(load_error(built_plugin("not_a_plugin")).find("exports no 'ropecheck_plugin_entry'"),
            std::string::npos);
  EXPECT_NE(load_error(built_plugin("wrong_abi_rope")).find("speaks plugin ABI version 7; this "
                                                            "ropecheck speaks versions 1, 2, 3, 4, 5 and 6"),
            std::string::npos);
  EXPECT_NE(load_error(built_plugin("fp16_null_rope")).find("declares fp16 but apply_fp16 is NULL"),
            std::string::npos);
  EXPECT_NE(load_error(built_plugin("good_rope"), PluginOptions{-1.0}).find("--plugin-timeout"),
            std::string::npos);
  // A file that is not a shared library at all: dlopen's own reason.
  EXPECT_NE(load_error(ROPECHECK_PLUGIN_DIR "/../CMakeCache.txt").find("cannot be loaded"),
            std::string::npos);
}

TEST(PluginIsolation, CrashIsAPluginFailureAndTheWorkerIsRestarted) {
  const auto impl = load_plugin(built_plugin("crash_rope"));
  for (int call = 0; call < 3; ++call) {  // each call meets a fresh worker, which crashes again
    const auto message = failure_of(*impl, Problem(8));
    EXPECT_NE(message.find("plugin crashed with SIGSEGV"), std::string::npos) << message;
  }
}

TEST(PluginIsolation, HangIsKilledAfterTheTimeout) {
  const auto impl = load_plugin(built_plugin("hang_rope"), PluginOptions{0.3});
  const auto start = std::chrono::steady_clock::now();
  const auto message = failure_of(*impl, Problem(8));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(message.find("plugin did not answer within 0.3 s"), std::string::npos) << message;
  EXPECT_LT(seconds, 5.0);
}

TEST(PluginIsolation, WritePastTheEndIsCaughtByTheGuardBytes) {
  const auto impl = load_plugin(built_plugin("overflow_rope"));
  for (int call = 0; call < 2; ++call) {
    const auto message = failure_of(*impl, Problem(8));
    EXPECT_NE(message.find("plugin wrote 4 bytes past the end of q"), std::string::npos)
        << message;
  }
}

TEST(PluginIsolation, UnsupportedIsItsOwnOutcome) {
  const auto impl = load_plugin(built_plugin("unsupported_rope"));
  Problem small(64);
  EXPECT_NO_THROW(small.apply(*impl));
  Problem large(128);
  try {
    large.apply(*impl);
    FAIL() << "no UnsupportedCase";
  } catch (const UnsupportedCase& e) {
    EXPECT_NE(std::string(e.what()).find("plugin reported unsupported for head_dim=128"),
              std::string::npos)
        << e.what();
  }
}

// ---- the CLI: `ropecheck verify|list --plugin` ------------------------------------------------

// `ropecheck verify --plugin NAME.so --cases 30` passes every RoPE property of the catalogue.
// An ABI 1 plugin carries no frequency scaling: the scaling properties say so by skipping.
void expect_whole_catalogue_passes(const std::string& name, bool scaled = false) {
  const auto v = verify_plugin(name, {"--cases", "30"});
  EXPECT_EQ(v.run.code, 0) << v.run.out << v.run.err;
  const auto found = statuses(v.json, "plugin/" + name);
  const std::set<std::string> need_scaling = {"linear_scaling_interpolates", "scaling_boundary"};
  // Before ABI 3 a plugin positions its tokens on one axis: the multi-axis properties skip.
  const std::set<std::string> need_axes = {"axes_equal_is_1d", "section_locality"};
  for (const auto& id : rope_property_ids()) {
    ASSERT_TRUE(found.count(id)) << id << " not run\n" << v.run.out;
    const bool skipped =
        (!scaled && need_scaling.count(id) != 0) || need_axes.count(id) != 0 || test::judges_backward(id);
    EXPECT_EQ(found.at(id), skipped ? "SKIPPED" : "PASSED") << id << "\n" << v.run.out;
  }
  // Only the plugin: --plugin without --impl leaves the registry out.
  EXPECT_EQ(v.run.out.find("rotation_matrix/scalar"), std::string::npos) << v.run.out;
}

TEST(PluginCli, GoodPluginPassesTheWholeRopeCatalogue) { expect_whole_catalogue_passes("good_rope"); }

// Judged as fp16 storage: fp16-range inputs, subnormals included, and the fp16 rounding term.
TEST(PluginCli, Fp16PluginPassesTheWholeRopeCatalogue) { expect_whole_catalogue_passes("fp16_rope"); }

// `ropecheck verify --plugin NAME.so --property oracle_agreement` fails it, printing `shows`.
void expect_oracle_agreement_fails(const std::string& name, const std::string& shows) {
  const auto v = verify_plugin(name, {"--property", "oracle_agreement"});
  EXPECT_EQ(v.run.code, 1) << v.run.out << v.run.err;
  EXPECT_EQ(statuses(v.json, "plugin/" + name).at("oracle_agreement"), "FAILED") << v.run.out;
  EXPECT_NE(v.run.out.find(shows), std::string::npos) << v.run.out;
}

// ggml's angle recurrence declared as such: held to the recurrence bound, it passes everything.
TEST(PluginCli, RecurrencePluginPassesTheWholeRopeCatalogue) {
  expect_whole_catalogue_passes("recurrence_rope");
}

// The same kernel declaring fp32 angles, a more accurate class than it has: it fails.
TEST(PluginCli, RecurrencePluginDeclaringFp32AnglesFailsOracleAgreement) {
  expect_oracle_agreement_fails("recurrence_as_fp32_rope", "counterexample:");
}

// The same plugin with a truncating narrowing: up to one fp16 ulp, twice the bound's rounding.
TEST(PluginCli, Fp16TruncatingPluginFailsOracleAgreement) {
  expect_oracle_agreement_fails("fp16_truncating_rope", "counterexample:");
}

// ABI 2: every scaling kind generated for it, the scaling properties run rather than skip.
TEST(PluginCli, Abi2ScaledPluginPassesTheWholeRopeCatalogue) {
  expect_whole_catalogue_passes("scaled_rope", /*scaled=*/true);
}

// Llama 3's smooth band snapped to its ends: only the scaled specs can see it.
TEST(PluginCli, Abi2PluginWithALlama3BugFailsOracleAgreementOnALlama3Spec) {
  expect_oracle_agreement_fails("llama3_unsmoothed_rope", "scaling=llama3");
}

TEST(PluginCli, BrokenPluginFailsWithAShrunkCounterexampleThatReplays) {
  const auto v = verify_plugin("broken_rope", {"--property", "oracle_agreement"});
  ASSERT_EQ(v.run.code, 1) << v.run.out << v.run.err;
  EXPECT_NE(v.run.out.find("FAILED  plugin/broken_rope"), std::string::npos) << v.run.out;
  EXPECT_NE(v.run.out.find("counterexample:"), std::string::npos) << v.run.out;
  EXPECT_NE(v.run.out.find("layout=half_split"), std::string::npos) << v.run.out;
  const auto repro_at = v.run.out.find("__REPRO: ");
  ASSERT_NE(repro_at, std::string::npos) << v.run.out;
  const std::string repro = v.run.out.substr(
      repro_at + 9, v.run.out.find('\n', repro_at) - repro_at - 9);
  EXPECT_NE(repro.find("--plugin " + built_plugin("broken_rope")), std::string::npos) << repro;
  // The printed command, through the shell, replays the same failure.
  const ScratchDir out;
  const auto replay = spawn({"/bin/sh", "-c",
                             shell_quote(ROPECHECK_CLI_PATH) + " " + repro.substr(10) +
                                 " --out " + shell_quote(out.str())});
  EXPECT_EQ(replay.code, 1) << replay.out << replay.err;
  EXPECT_NE(replay.out.find("FAILED  plugin/broken_rope"), std::string::npos) << replay.out;
}

// ---- plugins wrong only where kernels switch paths (plugins/examples/threaded_rope.c) ---------

// The correct one, on every thread count up to 4 and at the model shapes the build's property
// tests run (the short ones; none in the sanitizer build): the whole catalogue.
TEST(PluginPathMutants, ThreadedPluginPassesTheWholeRopeCatalogue) {
  const auto v = verify_plugin("threaded_rope", {"--cases", "30", "--plugin-threads", "4", "--threads", "4",
                                                 "--model-shapes", ROPECHECK_TEST_MODEL_SHAPES});
  EXPECT_EQ(v.run.code, 0) << v.run.out << v.run.err;
  const auto found = statuses(v.json, "plugin/threaded_rope");
  EXPECT_EQ(found.size(), rope_property_ids().size()) << v.run.out;  // every one of them ran
  for (const auto& [id, status] : found) {
    const bool scaling = id == "linear_scaling_interpolates" || id == "scaling_boundary";
    const bool axes = id == "axes_equal_is_1d" || id == "section_locality";  // one axis (ABI 2)
    EXPECT_EQ(status, scaling || axes || test::judges_backward(id) ? "SKIPPED" : "PASSED") << id << "\n" << v.run.out;
  }
}

struct PluginPath {
  const char* plugin;
  const char* property;
  const char* path;  // what the shrunk case shows of the path it failed on
};

class PluginPathMutant : public ::testing::TestWithParam<PluginPath> {};

// Each bug fails verify (exit 1) with a shrunk case on its path, and the printed __REPRO command,
// run through the shell, fails the same way: the thread count and the model shape replay.
TEST_P(PluginPathMutant, FailsAndTheReproLineReplaysThePath) {
  const PluginPath& c = GetParam();
  const auto v = verify_plugin(c.plugin, {"--property", c.property, "--plugin-threads", "4", "--threads", "4",
                                          "--model-shapes", "short"});
  ASSERT_EQ(v.run.code, 1) << v.run.out << v.run.err;
  EXPECT_TRUE(std::regex_search(v.run.out, std::regex(c.path))) << c.path << "\n" << v.run.out;
  const auto repro_at = v.run.out.find("__REPRO: ");
  ASSERT_NE(repro_at, std::string::npos) << v.run.out;
  const std::string repro =
      v.run.out.substr(repro_at + 9, v.run.out.find('\n', repro_at) - repro_at - 9);
  EXPECT_NE(repro.find("--threads 4"), std::string::npos) << repro;
  EXPECT_NE(repro.find("--plugin-threads 4"), std::string::npos) << repro;
  const ScratchDir out;
  const auto replay = spawn({"/bin/sh", "-c",
                             shell_quote(ROPECHECK_CLI_PATH) + " " + repro.substr(10) +
                                 " --out " + shell_quote(out.str())});
  EXPECT_EQ(replay.code, 1) << replay.out << replay.err;
  EXPECT_TRUE(std::regex_search(replay.out, std::regex(c.path))) << c.path << "\n" << replay.out;
}

// A split wrong only where tokens % threads >= 2, which takes 3 threads or more: verify with its
// default options finds it on any machine (the counts it draws go past the CPUs; the CI machines
// have 2), and the shrunk case names the thread count and the tokens it split.
TEST(PluginPathMutants, SplitWrongFromThreeThreadsFailsVerifyWithDefaultOptions) {
  const auto v = verify_plugin("threaded_split_remainder_rope", {"--property", "oracle_agreement"});
  ASSERT_EQ(v.run.code, 1) << v.run.out << v.run.err;
  std::smatch call;
  const std::string out = v.run.out;
  ASSERT_TRUE(std::regex_search(out, call, std::regex("the call that failed: plugin/threaded_split_remainder_rope: "
                                                      "tokens=([0-9]+) heads=[0-9]+ kv_heads=[0-9]+ threads=([0-9]+)")))
      << out;
  const int tokens = std::stoi(call[1]), threads = std::stoi(call[2]);
  EXPECT_GE(threads, 3) << out;
  EXPECT_GE(tokens % threads, 2) << out;  // the one split the bug gets wrong
}

const PluginPath kPluginPaths[] = {
    {"threaded_split_floor_rope", "oracle_agreement", "threads=[2-4] "},
    {"threaded_prefill_tile_rope", "identity_at_zero", "at model shape [a-z0-9_]+"},
    {"threaded_wide_head_rope", "oracle_agreement", "head_dim=(129|1[3-9][0-9]|[2-9][0-9][0-9])"},
    {"threaded_long_context_rope", "oracle_agreement",
     "position (6553[6-9]|655[4-9][0-9]|65[6-9][0-9]{2}|6[6-9][0-9]{3}|[7-9][0-9]{4}|[0-9]{6,})"},
};
INSTANTIATE_TEST_SUITE_P(Plugins, PluginPathMutant, ::testing::ValuesIn(kPluginPaths),
                         [](const auto& info) { return std::string(info.param.plugin); });

TEST(PluginCli, CrashingPluginFailsEveryPropertyAndRopecheckExits1) {
  const auto v = verify_plugin("crash_rope", {"--cases", "5", "--property", "oracle_agreement",
                                              "--property", "identity_at_zero"});
  EXPECT_EQ(v.run.code, 1) << v.run.out << v.run.err;  // not 128 + SIGSEGV
  const auto found = statuses(v.json, "plugin/crash_rope");
  EXPECT_EQ(found.at("oracle_agreement"), "FAILED");
  EXPECT_EQ(found.at("identity_at_zero"), "FAILED");  // the run went on after the first crash
  EXPECT_NE(v.run.out.find("plugin crashed with SIGSEGV"), std::string::npos) << v.run.out;
  EXPECT_NE(v.run.out.find("__REPRO:"), std::string::npos) << v.run.out;
}

TEST(PluginCli, HangingPluginFailsAfterTheTimeout) {
  const auto v = verify_plugin("hang_rope", {"--cases", "5", "--plugin-timeout", "0.2",
                                             "--property", "identity_at_zero"});
  EXPECT_EQ(v.run.code, 1) << v.run.out << v.run.err;
  EXPECT_EQ(statuses(v.json, "plugin/hang_rope").at("identity_at_zero"), "HANG") << v.run.out;
  EXPECT_NE(v.run.out.find("plugin did not answer within 0.2 s"), std::string::npos) << v.run.out;
  EXPECT_NE(v.run.out.find("--plugin-timeout 0.2"), std::string::npos) << v.run.out;  // __REPRO
}

// Hangs only above head_dim 64, with the default watchdog (from each call's size): every
// property that meets such a case is HANG, reported once with the case that hung (not shrunk:
// no call is made after the hang, so no further watchdog period is waited), and verify goes on.
TEST(PluginCli, PluginThatHangsOnSomeInputsIsHangOncePerPropertyWithTheInput) {
  const auto v = verify_plugin("sometimes_hangs_rope",
                               {"--property", "oracle_agreement", "--property", "norm_preservation"});
  EXPECT_EQ(v.run.code, 1) << v.run.out << v.run.err;
  const auto found = statuses(v.json, "plugin/sometimes_hangs_rope");
  for (const char* property : {"oracle_agreement", "norm_preservation"}) {
    EXPECT_EQ(found.at(property), "HANG") << property << "\n" << v.run.out;
  }
  for (const auto& r : v.json.at("results")) {
    const std::string message = r.at("message");
    EXPECT_NE(message.find("did not answer within 3"), std::string::npos) << message;
    EXPECT_NE(message.find("not shrunk"), std::string::npos) << message;
    // The input that hung: a head_dim above 64, in the message.
    std::smatch m;
    ASSERT_TRUE(std::regex_search(message, m, std::regex("the call: head_dim=([0-9]+)"))) << message;
    EXPECT_GT(std::stoi(m[1]), 64) << message;
    EXPECT_FALSE(r.at("repro_command").get<std::string>().empty());
  }
  std::size_t hangs = 0;  // one watchdog period per property: one kill each
  for (auto at = v.run.out.find("did not answer within"); at != std::string::npos;
       at = v.run.out.find("did not answer within", at + 1)) {
    ++hangs;
  }
  EXPECT_EQ(hangs, 2u) << v.run.out;
}

TEST(PluginCli, OverflowingPluginFailsNamingTheWrite) {
  const auto v = verify_plugin("overflow_rope", {"--cases", "5", "--property", "norm_preservation"});
  EXPECT_EQ(v.run.code, 1) << v.run.out << v.run.err;
  EXPECT_NE(v.run.out.find("bytes past the end of q"), std::string::npos) << v.run.out;
}

TEST(PluginCli, UnsupportedCasesMakeThePropertySkippedNotPassed) {
  const auto v = verify_plugin("unsupported_rope", {"--property", "oracle_agreement"});
  EXPECT_EQ(v.run.code, 0) << v.run.out << v.run.err;
  EXPECT_EQ(statuses(v.json, "plugin/unsupported_rope").at("oracle_agreement"), "SKIPPED");
  EXPECT_NE(v.run.out.find("plugin reported unsupported for"), std::string::npos) << v.run.out;
}

TEST(PluginCli, UnloadablePluginsExit2WithAClearMessage) {
  struct Case {
    std::string plugin;
    std::string message;
  };
  for (const auto& c : {Case{built_plugin("no_such_plugin"), "no such file"},
                        Case{built_plugin("not_a_plugin"), "exports no 'ropecheck_plugin_entry'"},
                        Case{built_plugin("wrong_abi_rope"), "speaks plugin ABI version 7"},
                        Case{built_plugin("fp16_null_rope"), "declares fp16 but apply_fp16 is NULL"}}) {
    for (const char* command : {"verify", "list"}) {
      const auto run = ropecheck_cli({command, "--plugin", c.plugin});
      EXPECT_EQ(run.code, 2) << command << " " << c.plugin << "\n" << run.out << run.err;
      EXPECT_NE(run.err.find(c.message), std::string::npos) << run.err;
    }
  }
  const auto bad_timeout = ropecheck_cli({"verify", "--plugin", built_plugin("good_rope"),
                                          "--plugin-timeout", "-1"});
  EXPECT_EQ(bad_timeout.code, 2) << bad_timeout.err;
  const auto bad_threads = ropecheck_cli({"verify", "--plugin", built_plugin("scaled_rope"),
                                          "--plugin-threads", "0"});
  EXPECT_EQ(bad_threads.code, 2) << bad_threads.err;
  EXPECT_NE(bad_threads.err.find("--plugin-threads"), std::string::npos) << bad_threads.err;
}

TEST(PluginCli, ListShowsAnAbi2PluginsScalingKindsAndWhatItsInitChose) {
  const auto text = ropecheck_cli({"list", "--plugin", built_plugin("scaled_rope")});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("yarn"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("init: double-precision reference"), std::string::npos) << text.out;
  const auto json = ropecheck_cli({"list", "--json", "--plugin", built_plugin("scaled_rope")});
  ASSERT_EQ(json.code, 0) << json.err;
  const auto plugins = Json::parse(json.out).at("plugins");
  ASSERT_EQ(plugins.size(), 1u);
  EXPECT_EQ(plugins[0].at("plugin").at("abi_version"), 2);
  EXPECT_EQ(plugins[0].at("capabilities").at("scaling_kinds").size(), std::size(kAllScalingKinds));
}

TEST(PluginCli, ListShowsThePluginsCapabilities) {
  const auto text = ropecheck_cli({"list", "--plugin", built_plugin("good_rope")});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("Plugins (1)"), std::string::npos) << text.out;
  const auto row_at = text.out.find("plugin/good_rope");
  ASSERT_NE(row_at, std::string::npos) << text.out;
  const std::string row = text.out.substr(row_at, text.out.find('\n', row_at) - row_at);
  for (const char* want : {"interleaved,half_split", "fp64", "fp32", "yes", "any"}) {
    EXPECT_NE(row.find(want), std::string::npos) << want << " in " << row;
  }
  const auto json = ropecheck_cli({"list", "--json", "--plugin", built_plugin("good_rope")});
  ASSERT_EQ(json.code, 0) << json.err;
  const auto plugins = Json::parse(json.out).at("plugins");
  ASSERT_EQ(plugins.size(), 1u);
  EXPECT_EQ(plugins[0].at("id"), "plugin/good_rope");
  EXPECT_EQ(plugins[0].at("capabilities").at("angle_precisions"), Json::array({"fp64"}));
  EXPECT_EQ(plugins[0].at("plugin").at("abi_version"), 1);
  EXPECT_EQ(plugins[0].at("plugin").at("dtypes"), Json::array({"fp32"}));
  EXPECT_EQ(plugins[0].at("capabilities").at("storage"), "fp32");
}

TEST(PluginCli, ListShowsAnFp16PluginsDtypesAndStorage) {
  const auto text = ropecheck_cli({"list", "--plugin", built_plugin("fp16_rope")});
  ASSERT_EQ(text.code, 0) << text.err;
  const auto row_at = text.out.find("plugin/fp16_rope");
  ASSERT_NE(row_at, std::string::npos) << text.out;
  const std::string row = text.out.substr(row_at, text.out.find('\n', row_at) - row_at);
  // DTYPES and STORAGE are both fp16: two separate words in the row.
  const auto first = row.find(" fp16 ");
  ASSERT_NE(first, std::string::npos) << row;
  EXPECT_NE(row.find(" fp16 ", first + 1), std::string::npos) << row;
  const auto json = ropecheck_cli({"list", "--json", "--plugin", built_plugin("fp16_rope")});
  ASSERT_EQ(json.code, 0) << json.err;
  const auto plugins = Json::parse(json.out).at("plugins");
  ASSERT_EQ(plugins.size(), 1u);
  EXPECT_EQ(plugins[0].at("plugin").at("dtypes"), Json::array({"fp16"}));
  EXPECT_EQ(plugins[0].at("capabilities").at("storage"), "fp16");
}

}  // namespace
}  // namespace ropecheck
