// The call-form PyTorch peers (peers/torch: torch_vllm_rope.cc, torch_hf_qk_norm.cc; built, and
// this test compiled, only where find_package(Torch) succeeded): each loads as an ABI 6 form
// plugin declaring what its engine does, `verify --plugin` judges it with every call-form property
// through the real binary, and on the same calls it leaves the same bytes as the Python forms of
// the same library code (plugins/examples/python/torch_rope_form.py).   ctest -R TorchFormPeers
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "plugins/host/plugin_subjects.h"
#include "plugins/host/python_host.h"
#include "tests/support/form_call.h"
#include "tests/support/python_cli.h"
#include "tests/support/test_process.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;
using test::FormShape;
using test::Views;

constexpr const char* kVllmRope = "plugin/torch_vllm_rope";
constexpr const char* kHfQkNorm = "plugin/torch_hf_qk_norm";
const std::vector<std::string> kTorchFormProperties = {"form_oracle_agreement",     "form_cache_last_row",
                                                  "form_untouched_outside",    "qk_norm_matches_two_passes",
                                                  "qk_norm_scale_invariant",   "qk_norm_zero_head_finite",
                                                  "qk_norm_tail_not_rotated"};

template <typename T>
bool torch_form_has(const std::vector<T>& v, T x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// ---- 1. what each peer declares: its engine's form ---------------------------------------------

TEST(TorchFormPeers, EachDeclaresItsEnginesStoragesAnglesAndNorm) {
  const LoadedPlugins loaded =
      load_plugins({test::built_plugin("torch_vllm_rope"), test::built_plugin("torch_hf_qk_norm")}, {});
  std::map<std::string, RopeFormCapabilities> caps;
  for (const auto& impl : loaded.rope_form) caps[std::string(impl->id())] = impl->capabilities();
  ASSERT_EQ(caps.size(), 2u);
  // vLLM: its cos_sin_cache (or the table built from the spec), every storage, any view, no norm.
  for (const StorageType s : {StorageType::fp32, StorageType::bf16, StorageType::fp16}) EXPECT_TRUE(torch_form_has(caps[kVllmRope].storages, s));
  EXPECT_TRUE(torch_form_has(caps[kVllmRope].angle_sources, AngleSource::cos_sin_cache));
  EXPECT_TRUE(caps[kVllmRope].strided);
  EXPECT_TRUE(caps[kVllmRope].k_optional);
  EXPECT_FALSE(caps[kVllmRope].normalizes());
  // HF Qwen3: its own angles, fp32 and bf16, the plain weight, the norm in the model's dtype.
  EXPECT_EQ(caps[kHfQkNorm].angle_sources, std::vector{AngleSource::spec});
  EXPECT_TRUE(torch_form_has(caps[kHfQkNorm].storages, StorageType::bf16));
  EXPECT_EQ(caps[kHfQkNorm].norm_weights, std::vector{NormWeight::plain});
  EXPECT_EQ(caps[kHfQkNorm].norm_precision, NormPrecision::storage);
}

// ---- 2. `verify --plugin`: every call-form property that applies passes -------------------------

// Seen failing: with eps dropped from torch_hf_qk_norm's rsqrt, form_oracle_agreement (3.6 of its
// bound), qk_norm_matches_two_passes, qk_norm_scale_invariant, qk_norm_zero_head_finite and
// qk_norm_tail_not_rotated FAILED, and the bytes below differed from the Python form's.

TEST(TorchFormPeers, VerifyPassesEveryFormPropertyThatApplies) {
  const std::map<std::string, int> applying = {{"torch_vllm_rope", 3}, {"torch_hf_qk_norm", 6}};
  for (const auto& [peer, passed] : applying) {
    SCOPED_TRACE(peer);
    const test::ScratchDir out(fmt::format("torch_form_verify_{}", peer));
    std::vector<std::string> args = {ROPECHECK_CLI_PATH, "verify", "--plugin", test::built_plugin(peer), "--impl",
                                     fmt::format("plugin/{}", peer), "--cases", "50", "--out", out.str()};
    for (const auto& p : kTorchFormProperties) args.insert(args.end(), {"--property", p});
    const auto run = test::spawn(args);
    ASSERT_TRUE(fs::exists(out / "verify.json")) << run.out << run.err;
    EXPECT_EQ(run.code, 0) << run.out;
    const auto json = nlohmann::json::parse(test::slurp(out / "verify.json"));
    int passes = 0;
    for (const auto& r : json.at("results")) {
      if (r.at("subject") != fmt::format("plugin/{}", peer)) continue;
      passes += r.at("status") == "PASSED";
      EXPECT_NE(r.at("status"), "FAILED") << r.at("property") << "\n" << run.out;
    }
    EXPECT_EQ(passes, passed) << run.out;
  }
}

// ---- 3. the same bytes as the Python form of the same library code ------------------------------

// Both run torch's ops on the same values in the same order, one thread each: every byte of the
// buffer the same, strided views, MLA's q_pe and the untouched elements included.
TEST(TorchFormPeers, TheSameBytesAsThePythonFormsOnTheSameCalls) {
  REQUIRE_TORCH();
  const LoadedPlugins loaded =
      load_plugins({test::built_plugin("torch_vllm_rope"), test::built_plugin("torch_hf_qk_norm")}, {});
  const auto peer = [&](std::string_view id) -> const RopeFormImpl& {
    for (const auto& impl : loaded.rope_form) {
      if (impl->id() == id) return *impl;
    }
    throw std::runtime_error(fmt::format("{} not loaded", id));
  };
  const auto vllm_py = load_python_rope_form(test::py_example("torch_rope_form.py:vllm_forward_native"), test::py_options());
  const auto qwen3_py = load_python_rope_form(test::py_example("torch_rope_form.py:hf_qwen3_qk_norm"), test::py_options());
  unsigned seed = 500;
  for (const Views views : test::kAllViews) {
    for (const StorageType storage : {StorageType::fp32, StorageType::bf16}) {
      for (const AngleSource angles : {AngleSource::cos_sin_cache, AngleSource::spec}) {
        const test::FormCase c = test::form_case({views, storage, angles, Layout::interleaved, seed % 2 == 0}, seed++);
        EXPECT_EQ(test::run_form(peer(kVllmRope), c), test::run_form(*vllm_py, c)) << c.what();
      }
      FormShape norm{views, storage, AngleSource::spec, Layout::half_split, seed % 2 == 0, true};
      norm.precision = NormPrecision::storage;
      const test::FormCase c = test::form_case(norm, seed++);
      EXPECT_EQ(test::run_form(peer(kHfQkNorm), c), test::run_form(*qwen3_py, c)) << c.what();
    }
  }
}

}  // namespace
}  // namespace ropecheck
