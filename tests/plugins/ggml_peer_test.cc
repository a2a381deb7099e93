// The ggml peer (peers/ggml, built into ROPECHECK_PLUGIN_DIR only where scripts/install-ggml-peer.sh
// installed the pinned prebuilt ggml; this test does not exist otherwise): llama.cpp's
// ggml_rope_ext on ggml's CPU backend (and its gradient, ggml_rope_ext_back), verified through the
// real binary (ROPECHECK_CLI_PATH) with every verdict pinned, its fp16 storage against the oracle,
// and its angle error at positions 1e3, 1e5 and 1e6 beside ropecheck's forms of the same angles.
//   ctest -R GgmlPeer
//
// Re-pinning (a new ggml pin, or a change of the tolerance model): run
//   build/ropecheck verify --plugin build/plugins/ggml.so
//   build/tests/plugins_tests --gtest_filter='GgmlPeer*'    (prints the error table)
// and copy the verdicts and measurements into kGgmlVerdicts and kErrors. Nothing here is
// widened to make the peer pass: every expectation is a measurement, and each can fail.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <filesystem>
#include <iostream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/isa.h"
#include "core/storage.h"
#include "core/tolerance.h"
#include "impls/oracle/oracle.h"
#include "impls/registry.h"
#include "plugins/host/plugin_host.h"
#include "ropecheck/plugin.h"
#include "tests/support/test_process.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;
using test::slurp;
using test::spawn;
using Json = nlohmann::json;

constexpr const char* kGgml = "plugin/ggml";
constexpr const char* kGgmlCompute = "plugin/ggml_compute";

// ---- 1. `ropecheck verify --plugin` on both builds: every property's verdict ------------------

struct GgmlVerdict {
  const char* property;
  const char* status;
  long position;  // FAILED only: the position in the shrunk counterexample's message (seed 1)
};

// Measured with ggml 0.25.1 (0ad4a86, the pinned prebuilt release), declaring fp32 recurrence
// angles and (ABI 3) MROPE, IMROPE and VISION through ggml_rope_multi, seed 1, 100 cases. Three
// findings (docs/findings.md):
//   identity_at_zero under YaRN with an explicit attention factor of 1: ggml multiplies YaRN's own
//     1 + 0.1 ln(1/freq_scale) into cos and sin whatever it is told, and the compensating
//     attn_factor (llama.cpp's way for DeepSeek-2) leaves 0.99999994 for 1 at position 0;
//   IMROPE: a pair outside the t, h and w slices (i = 0 mod 3 at or past 3 s_t, i = 1 past 3 s_h,
//     i = 2 past 3 s_w; pairs 61 and 62 at Qwen3-VL's own sections) takes ggml's fourth position
//     (0, as the peer passes it), not t as Qwen3-VL's apply_interleaved_mrope: shrunk to sections
//     0,0,1, one pair, t = 1 left unrotated; every property whose cases meet it FAILS;
// (VISION with an odd number of pairs, which ggml-cpu aborts on, is outside the spec: vision RoPE
// has an even pair count, core/position_axes.h.) Every property these two do not reach passes,
// YaRN without truncation included (as freq_factors). Both builds give the same verdicts.
// The backward (ABI 4: ggml_rope_ext_back, ggml_rope_multi_back): the IMROPE finding again, in
// backward_oracle_agreement (the gradient's pairs past the slices turned by the fourth position,
// shrunk to the same case); adjoint_identity and backward_inverts_forward pass, since ggml's
// forward and backward agree with each other there; every other mode is the oracle's gradient
// (GgmlPeerBackward below).
constexpr GgmlVerdict kGgmlVerdicts[] = {
    {"oracle_agreement", "FAILED", 1},
    {"norm_preservation", "PASSED", 0},
    {"identity_at_zero", "FAILED", 0},
    {"tail_untouched", "PASSED", 0},
    {"boundary_shapes", "FAILED", 1},
    {"nonfinite_propagation", "FAILED", 1},
    {"call_history_independence", "FAILED", 1},
    {"inverse", "PASSED", 0},
    {"composition", "PASSED", 0},
    {"relative_position", "PASSED", 0},
    {"layout_equivalence", "PASSED", 0},
    {"linear_scaling_interpolates", "PASSED", 0},
    {"scaling_boundary", "FAILED", 16},  // "original_max_position 16" comes first in its message
    {"long_range_decay", "PASSED", 0},
    {"axes_equal_is_1d", "FAILED", 1},
    {"section_locality", "PASSED", 0},
    {"backward_oracle_agreement", "FAILED", 1},
    {"adjoint_identity", "PASSED", 0},
    {"backward_inverts_forward", "PASSED", 0},
    {"backward_norm_preservation", "PASSED", 0},
    {"backward_tail_untouched", "PASSED", 0},
};

TEST(GgmlPeerVerify, EveryPropertyVerdictIsThePinnedOne) {
  const ScratchDir out("ggml_peer_verify");
  const auto run = spawn({ROPECHECK_CLI_PATH, "verify", "--plugin", test::built_plugin("ggml"),
                          "--plugin", test::built_plugin("ggml_compute"), "--out", out.str()});
  ASSERT_TRUE(fs::exists(out / "verify.json")) << run.out << run.err;
  const Json json = Json::parse(slurp(out / "verify.json"));
  std::map<std::pair<std::string, std::string>, Json> results;
  for (const auto& r : json.at("results")) results[{r.at("subject"), r.at("property")}] = r;
  for (const char* subject : {kGgml, kGgmlCompute}) {
    for (const GgmlVerdict& v : kGgmlVerdicts) {
      SCOPED_TRACE(fmt::format("{} {}", subject, v.property));
      const auto it = results.find({subject, v.property});
      ASSERT_NE(it, results.end()) << "no result row";
      const Json& r = it->second;
      EXPECT_EQ(r.at("status"), v.status) << r.dump(2);
      if (std::string(v.status) == "FAILED") {
        const std::string message = r.at("message");
        std::smatch m;
        ASSERT_TRUE(std::regex_search(message, m, std::regex("position (-?[0-9]+)"))) << message;
        EXPECT_EQ(std::stol(m[1]), v.position) << message;
      } else if (std::string(v.status) == "PASSED") {
        EXPECT_GT(r.at("cases").get<int>(), 0);
      }
      results.erase(it);
    }
  }
  // Every row verify wrote for the peer is pinned above: a new property needs a new row. The fused
  // call's rows (cache_*, padding_inert, fp8_saturates) are pinned in ggml_fused_peer_test.cc, the
  // form call's (form_*, qk_norm_*) in ggml_form_peer_test.cc.
  const std::regex fused("cache_.*|padding_inert|fp8_saturates|form_.*|qk_norm_.*");
  for (const auto& [key, r] : results) {
    if ((key.first == kGgml || key.first == kGgmlCompute) && !std::regex_match(key.second, fused)) {
      ADD_FAILURE() << "unpinned result " << key.second;
    }
  }
  EXPECT_EQ(run.code, 1) << run.out;  // the finding above fails verify, as it must

  // The report lists it as a finding, with its shrunk case and its bound.
  const auto report = spawn({ROPECHECK_CLI_PATH, "report", "--in", out.str()});
  ASSERT_EQ(report.code, 0) << report.out << report.err;
  const std::string md = slurp(out / "report.md");
  const auto findings = md.find("### Findings in the peers");
  ASSERT_NE(findings, std::string::npos) << md;
  const std::regex row("\\| plugin/ggml \\| identity_at_zero \\| R_0 changed q[^|]*got 0\\.99999994[^|]*\\| "
                       "the call that failed: plugin/ggml: [^|]*spec: head_dim=2 [^|]*scaling=yarn[^|]*\\| 0\\.[0-9]+ / 0 eps32");
  EXPECT_TRUE(std::regex_search(md.substr(findings), row)) << md.substr(findings);
}

// What the peer declares and what its init chose: both layouts, fp32 and fp16 storage, fp32
// recurrence angles only, the scaling kinds that map onto ggml_rope_ext, ggml's int32 positions
// (above ropecheck's own 2^24), both passes (ABI 4; the peer is ABI 6), and a CPU backend this CPU runs (no AVX-512
// one where it lacks it).
TEST(GgmlPeerVerify, CapabilitiesAndInitLineAreWhatGgmlDoes) {
  const auto ggml = load_plugin(test::built_plugin("ggml"));
  const RopeCapabilities caps = ggml->capabilities();
  EXPECT_EQ(caps.layouts, (std::vector{Layout::interleaved, Layout::half_split}));
  EXPECT_EQ(caps.angle_precisions, std::vector{AnglePrecision::fp32_recurrence});
  EXPECT_EQ(caps.storage, StorageType::fp32);
  EXPECT_TRUE(caps.partial_rotary);
  EXPECT_EQ(caps.scaling_kinds.size(), 7u);  // none and all six kinds (yarn truncated only)
  EXPECT_EQ(caps.axis_modes, (std::vector{AxisMode::none, AxisMode::mrope, AxisMode::imrope, AxisMode::vision}));
  // The fused entry (ggml_fused_peer_test.cc) and the form entry (ggml_form_peer_test.cc).
  EXPECT_EQ(plugin_info(*ggml)->abi_version, ROPECHECK_PLUGIN_ABI_V6);
  EXPECT_EQ(caps.passes, (std::vector{Pass::forward, Pass::backward}));
  EXPECT_EQ(caps.max_position, RopeCapabilities{}.max_position);
  const PluginInfo* info = plugin_info(*ggml);
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->dtypes, ROPECHECK_DTYPE_FP32 | ROPECHECK_DTYPE_FP16);
  std::cout << "init: " << info->description << '\n';
  EXPECT_NE(info->description.find("ggml 0.25.1 (0ad4a86) CPU backend libggml-cpu-"), std::string::npos)
      << info->description;
  if (!cpu_supports(Isa::avx512)) {
    for (const char* level : {"zen4", "skylakex", "icelake", "cascadelake", "cooperlake", "cannonlake",
                              "sapphirerapids"}) {
      EXPECT_EQ(info->description.find(level), std::string::npos) << info->description;
    }
  }
}

// ---- 2. fp16 storage (verify judges the fp32 entry; ggml's F16 rope is checked here) ----------

// The peer loaded into this process (dlopen, as a user of the ABI may), its init run: the ABI's
// apply (or apply_backward) on fp16 buffers, which ropecheck's own RopeImpl does not send to an
// fp32 plugin.
class InProcessPeer {
 public:
  explicit InProcessPeer(const std::string& path) : library_(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    if (library_ == nullptr) throw std::runtime_error(dlerror());
    void* symbol = dlsym(library_, ROPECHECK_PLUGIN_ENTRY_SYMBOL);
    if (symbol == nullptr) throw std::runtime_error("no entry");
    const void* (*entry)();
    std::memcpy(&entry, &symbol, sizeof entry);
    plugin_ = static_cast<const ropecheck_plugin_v4*>(entry());  // ABI 6 keeps ABI 4's layout
    if (plugin_->abi_version != ROPECHECK_PLUGIN_ABI_V6) throw std::runtime_error("not ABI 6");
    char line[200] = {};
    ropecheck_plugin_init_args args{sizeof args, 1, line, sizeof line, 0, {}};
    if (plugin_->init(&args, &context_) != ROPECHECK_PLUGIN_OK) throw std::runtime_error(line);
  }
  ~InProcessPeer() {
    plugin_->teardown(context_);
    dlclose(library_);
  }
  std::int32_t apply(const ropecheck_plugin_call& call, Pass pass) const {
    return pass == Pass::backward ? plugin_->apply_backward(context_, &call) : plugin_->apply(context_, &call);
  }

 private:
  void* library_;
  const ropecheck_plugin_v4* plugin_ = nullptr;
  void* context_ = nullptr;
};

// The worst error of one rotation against the oracle, as a fraction of the tolerance model's bound
// for the storage (eps32 * |pair| units, core/tolerance.h).
double worst_of_bound(const RopeSpec& spec, StorageType storage, const std::vector<float>& in,
                      const std::vector<float>& got, std::int64_t heads, std::span<const std::int64_t> positions) {
  const auto want = oracle_rope(spec, in, static_cast<std::int64_t>(positions.size()), heads, positions);
  const auto theta = oracle_inverse_frequencies(spec);
  const ErrorModel model = error_model(spec, storage);
  const auto d = static_cast<std::size_t>(spec.head_dim), half = static_cast<std::size_t>(spec.rotary_dim / 2);
  double worst = 0;
  for (std::size_t t = 0; t < positions.size(); ++t) {
    for (std::size_t h = 0; h < static_cast<std::size_t>(heads); ++h) {
      const std::size_t row = (t * static_cast<std::size_t>(heads) + h) * d;
      for (std::size_t i = 0; i < half; ++i) {
        const std::size_t a = row + (spec.layout == Layout::interleaved ? 2 * i : i);
        const std::size_t b = row + (spec.layout == Layout::interleaved ? 2 * i + 1 : i + half);
        const double pair = unit_pair_norm(storage, model.attention_factor, std::hypot(double{in[a]}, double{in[b]}));
        const double bound = rotation_bound_units(model, positions[t], static_cast<double>(theta[i]), static_cast<int>(i));
        for (const std::size_t at : {a, b}) {
          worst = std::max(worst, std::abs(got[at] - want[at]) / (kEps32 * pair) / bound);
        }
      }
    }
  }
  return worst;
}

// Measured: 0.86 (interleaved) and 0.89 (half_split) of the fp16 bound, the bound of fp16 storage
// with fp32 recurrence angles (partial rotary, GQA, positions to 65535); the backward (F16
// ggml_rope_ext_back) 0.94 and 0.96 of the same bound.
TEST(GgmlPeerFp16, F16TensorsStayWithinTheFp16Bound) {
  const InProcessPeer ggml(test::built_plugin("ggml"));
  for (const Pass pass : kAllPasses) {
    for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
      RopeSpec spec;
      spec.pass = pass;
      spec.head_dim = 128;
      spec.rotary_dim = 96;  // partial: the tail passes through
      spec.layout = layout;
      spec.angle_precision = AnglePrecision::fp32_recurrence;
      const std::int64_t tokens = 5, q_heads = 4, k_heads = 2;
      const std::vector<std::int64_t> positions = {0, 1, 4095, 30000, 65535};
      std::vector<float> q_in(static_cast<std::size_t>(tokens * q_heads * 128)), k_in(static_cast<std::size_t>(tokens * k_heads * 128));
      for (std::size_t i = 0; i < q_in.size(); ++i) q_in[i] = round_to_storage(std::sin(0.3f * static_cast<float>(i)), StorageType::fp16);
      for (std::size_t i = 0; i < k_in.size(); ++i) k_in[i] = round_to_storage(std::cos(0.7f * static_cast<float>(i)), StorageType::fp16);
      std::vector<Fp16> q(q_in.size()), k(k_in.size());
      std::transform(q_in.begin(), q_in.end(), q.begin(), fp16_from_float);
      std::transform(k_in.begin(), k_in.end(), k.begin(), fp16_from_float);
      ropecheck_plugin_spec s{};
      s.struct_size = sizeof s;
      s.head_dim = spec.head_dim;
      s.rotary_dim = spec.rotary_dim;
      s.layout = layout == Layout::interleaved ? ROPECHECK_LAYOUT_INTERLEAVED : ROPECHECK_LAYOUT_HALF_SPLIT;
      s.angle_precision = ROPECHECK_ANGLES_FP32_RECURRENCE;
      s.base = spec.base;
      s.attention_factor = 1;
      ropecheck_plugin_call call{};
      call.struct_size = sizeof call;
      call.dtype = ROPECHECK_DTYPE_FP16;
      call.spec = &s;
      call.q = q.data();  // a std::vector's: the peer stages what ggml cannot wrap (32-byte alignment)
      call.q_heads = q_heads;
      call.k = k.data();
      call.k_heads = k_heads;
      call.positions = positions.data();
      call.tokens = tokens;
      call.threads = 1;
      ASSERT_EQ(ggml.apply(call, pass), ROPECHECK_PLUGIN_OK);
      std::vector<float> q_out(q.size()), k_out(k.size());
      std::transform(q.begin(), q.end(), q_out.begin(), float_from_fp16);
      std::transform(k.begin(), k.end(), k_out.begin(), float_from_fp16);
      const double worst = std::max(worst_of_bound(spec, StorageType::fp16, q_in, q_out, q_heads, positions),
                                    worst_of_bound(spec, StorageType::fp16, k_in, k_out, k_heads, positions));
      std::cout << fmt::format("ggml fp16 {} {}: {:.3f} of the fp16 bound\n", to_string(pass), to_string(layout),
                               worst);
      EXPECT_LT(worst, 1.0);
      EXPECT_GT(worst, 0.0);  // it did rotate
      for (std::size_t row = 0; row < q.size() / 128; ++row) {  // the tail, bit for bit
        for (std::size_t f = 96; f < 128; ++f) EXPECT_EQ(q_out[row * 128 + f], q_in[row * 128 + f]);
      }
    }
  }
}

// ---- 3. the angle error at real context lengths, beside ropecheck's forms -----------------------

// The worst error (eps32 * |pair|) of one token of 4 heads x 128, base 1e4, at `position`.
double error_at(const RopeImpl& impl, AnglePrecision angles, std::int64_t position, Layout layout) {
  RopeSpec spec;
  spec.head_dim = 128;
  spec.rotary_dim = 128;
  spec.layout = layout;
  spec.angle_precision = angles;
  std::vector<float> x(4 * 128);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i) + 0.1f);
  auto got = x;
  const std::vector<std::int64_t> positions = {position};
  impl.apply(spec, HeadTensor{got, 1, 4, 128}, positions);
  const auto want = oracle_rope(spec, x, 1, 4, positions);
  double worst = 0;
  for (std::size_t row = 0; row < 4; ++row) {
    for (std::size_t i = 0; i < 64; ++i) {
      const std::size_t a = row * 128 + (layout == Layout::interleaved ? 2 * i : i);
      const std::size_t b = row * 128 + (layout == Layout::interleaved ? 2 * i + 1 : i + 64);
      const double pair = std::hypot(double{x[a]}, double{x[b]});
      for (const std::size_t at : {a, b}) worst = std::max(worst, std::abs(got[at] - want[at]) / (kEps32 * pair));
    }
  }
  return worst;
}

struct ErrorRow {
  std::int64_t position;
  double ggml, recurrence, hf;  // measured, eps32*|pair|
};

// Measured: ggml's error is theta_recurrence/scalar's (the same fp32 recurrence) to 0.1%, and
// 3.4x, 1.8x, 1.5x HF's fp32 angles at 1e3, 1e5, 1e6 (relative to |pair|: 1.1e-4, 9.1e-3, 7.7e-2);
// each pinned to within a factor of 1.5 of its measurement.
constexpr ErrorRow kErrors[] = {
    {1000, 911.6, 911.4, 268.1},
    {100000, 7.664e4, 7.665e4, 4.162e4},
    {1000000, 6.473e5, 6.473e5, 4.204e5},
};

TEST(GgmlPeerAccuracy, ErrorAtRealContextLengthsBesideRopechecksForms) {
  const auto ggml = load_plugin(test::built_plugin("ggml"));
  const RopeImpl* recurrence = find_rope("theta_recurrence/scalar");
  const RopeImpl* hf = find_rope("hf_transformers/scalar");
  ASSERT_TRUE(recurrence != nullptr && hf != nullptr);
  std::cout << "worst error, eps32*|pair|, one token of 4 heads x 128, base 1e4, interleaved\n"
            << "  position        ggml  theta_recurrence  hf_transformers (fp32)\n";
  for (const ErrorRow& row : kErrors) {
    const double g = error_at(*ggml, AnglePrecision::fp32_recurrence, row.position, Layout::interleaved);
    const double r = error_at(*recurrence, AnglePrecision::fp32_recurrence, row.position, Layout::interleaved);
    const double h = error_at(*hf, AnglePrecision::fp32, row.position, Layout::half_split);
    std::cout << fmt::format("  {:8d}  {:10.4g}  {:16.4g}  {:22.4g}   (ggml: {:.2g} of |pair|)\n", row.position, g,
                             r, h, g * kEps32);
    EXPECT_NEAR(std::log(g), std::log(row.ggml), std::log(1.5)) << row.position;
    EXPECT_NEAR(std::log(r), std::log(row.recurrence), std::log(1.5)) << row.position;
    EXPECT_NEAR(std::log(h), std::log(row.hf), std::log(1.5)) << row.position;
  }
}

// ---- 4. multi-axis RoPE (ABI 3): ggml_rope_multi ------------------------------------------------

// q (2 heads) and k (1 head) of 4 tokens on `spec`'s axes, rotated by the peer in its worker;
// returns the largest difference from the oracle over q and k.
double worst_against_oracle(const RopeImpl& peer, const RopeSpec& spec, std::vector<std::int64_t> positions) {
  const std::int64_t tokens = static_cast<std::int64_t>(positions.size()) / axis_count(spec);
  std::vector<float> q(static_cast<std::size_t>(tokens * 2 * spec.head_dim)), k(q.size() / 2);
  for (std::size_t i = 0; i < q.size(); ++i) q[i] = std::sin(static_cast<float>(i) + 0.5f);
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = std::cos(static_cast<float>(i) * 0.3f);
  const auto want_q = oracle_rope(spec, q, tokens, 2, positions);
  const auto want_k = oracle_rope(spec, k, tokens, 1, positions);
  peer.apply(spec, HeadTensor{q, tokens, 2, spec.head_dim}, HeadTensor{k, tokens, 1, spec.head_dim}, positions);
  double worst = 0;
  for (std::size_t i = 0; i < q.size(); ++i) worst = std::max(worst, std::abs(q[i] - want_q[i]));
  for (std::size_t i = 0; i < k.size(); ++i) worst = std::max(worst, std::abs(k[i] - want_k[i]));
  return worst;
}

// At the models' own sections ggml_rope_multi's MROPE and VISION are the spec's rotation, on both
// layouts (interleaved rows repacked into NEOX order by the peer) and a partial vision head.
// Positions to 16: the fp32 recurrence's error there stays below 2e-4 (1.6 i |m theta_i| eps32
// at i = 63), a pair on the wrong axis is off by O(1).
TEST(GgmlPeerMultiAxis, MropeAndVisionAtTheModelsSectionsAgreeWithTheOracle) {
  const auto ggml = load_plugin(test::built_plugin("ggml"));
  struct Case {
    PositionAxes axes;
    int head_dim, rotary_dim;
  };
  for (const Case c : {Case{{AxisMode::mrope, {16, 24, 24}}, 128, 128}, Case{{AxisMode::vision, {20, 20, 0}}, 80, 80},
                       Case{{AxisMode::vision, {10, 10, 0}}, 64, 40}}) {
    for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
      RopeSpec spec;
      spec.head_dim = c.head_dim;
      spec.rotary_dim = c.rotary_dim;
      spec.layout = layout;
      spec.angle_precision = AnglePrecision::fp32_recurrence;
      spec.axes = c.axes;
      SCOPED_TRACE(describe(spec));
      std::vector<std::int64_t> positions = c.axes.mode == AxisMode::vision
                                                ? std::vector<std::int64_t>{0, 0, 1, 2, 9, 4, 3, 16}
                                                : std::vector<std::int64_t>{0, 0, 0, 5, 3, 7, 9, 12, 1, 16, 2, 11};
      EXPECT_LT(worst_against_oracle(*ggml, spec, positions), 2e-4);
    }
  }
}

// The IMROPE finding, at Qwen3-VL's own sections 24,20,20 (64 pairs): Qwen3-VL's
// apply_interleaved_mrope rotates pairs 61 and 62 (past 3 s_h = 3 s_w = 60) by t; ggml takes its
// fourth position there, 0 as this peer passes it: a text token's pairs 61 and 62 come back
// unrotated, bit for bit, and every other pair is the spec's. The backward
// (ggml_rope_multi_back) the same: those pairs' gradient comes back as dy.
TEST(GgmlPeerMultiAxis, ImropePairsPastTheHAndWSlicesTakeTheFourthPosition) {
  const auto ggml = load_plugin(test::built_plugin("ggml"));
  RopeSpec spec;
  spec.head_dim = spec.rotary_dim = 128;
  spec.layout = Layout::half_split;
  spec.angle_precision = AnglePrecision::fp32_recurrence;
  spec.axes = {AxisMode::imrope, {24, 20, 20}};
  for (const auto& [m, pass] : {std::pair<std::int64_t, Pass>{16, Pass::forward}, {4000, Pass::forward},
                                {16, Pass::backward}, {4000, Pass::backward}}) {
    SCOPED_TRACE(fmt::format("position {} {}", m, to_string(pass)));
    spec.pass = pass;
    const std::vector<std::int64_t> positions = {m, m, m};  // a text token: t = h = w
    std::vector<float> q(128);
    for (std::size_t i = 0; i < q.size(); ++i) q[i] = std::sin(static_cast<float>(i) + 0.5f);
    const std::vector<float> in = q;
    const auto want = oracle_rope(spec, in, 1, 1, positions);
    ggml->apply(spec, HeadTensor{q, 1, 1, 128}, positions);
    for (std::size_t i = 0; i < 64; ++i) {
      for (const std::size_t f : {i, i + 64}) {
        if (i == 61 || i == 62) {
          EXPECT_EQ(q[f], in[f]) << "feature " << f;  // angle 0
        } else if (m == 16) {  // within the recurrence's error (above)
          EXPECT_NEAR(q[f], want[f], 2e-4) << "feature " << f;
        }
      }
    }
    // Where the spec turns them by m theta_61 and m theta_62 (0.6 rad at 4000).
    if (m == 4000) {
      EXPECT_GT(std::abs(want[61] - in[61]) + std::abs(want[62] - in[62]), 0.1);
    }
  }
}

// ---- 5. the backward pass (ABI 4): ggml_rope_ext_back and ggml_rope_multi_back -------------------

// Every mapping but IMROPE (the finding above) is the oracle's gradient a R^T dy: both layouts,
// partial rotary, every scaling kind (YaRN with its own attention factor, with an override, and
// untruncated as freq_factors), MROPE and VISION at the models' sections. Positions to 16 and
// negative ones: the fp32 recurrence's error stays below 2e-4 there (above), while a backward
// that rotated forward is off by O(1) and one that left out the attention factor (1.14 at YaRN
// factor 4) by about 0.1.
TEST(GgmlPeerBackward, EveryMappingButImropeIsTheOraclesGradient) {
  const auto ggml = load_plugin(test::built_plugin("ggml"));
  const auto scaled = [](ScalingKind kind, double factor) {
    RopeScaling s;
    s.kind = kind;
    s.factor = factor;
    if (kind != ScalingKind::linear && kind != ScalingKind::ntk) s.original_max_position = 16;
    if (kind == ScalingKind::dynamic_ntk || kind == ScalingKind::longrope) s.sequence_length = 40;
    for (int i = 0; kind == ScalingKind::longrope && i < 32; ++i) {
      s.short_factor.push_back(1 + 0.05 * i);
      s.long_factor.push_back(1 + 0.2 * i);
    }
    return s;
  };
  struct Case {
    const char* name;
    int head_dim, rotary_dim;
    RopeScaling scaling;
    PositionAxes axes;
  };
  RopeScaling yarn_override = scaled(ScalingKind::yarn, 4), yarn_untruncated = scaled(ScalingKind::yarn, 4);
  yarn_override.attention_factor = 1.5;
  yarn_untruncated.truncate = false;
  const Case cases[] = {
      {"unscaled", 64, 64, {}, {}},
      {"partial", 64, 48, {}, {}},
      {"linear", 64, 64, scaled(ScalingKind::linear, 4), {}},
      {"ntk", 64, 64, scaled(ScalingKind::ntk, 4), {}},
      {"dynamic_ntk", 64, 64, scaled(ScalingKind::dynamic_ntk, 2), {}},
      {"yarn", 64, 64, scaled(ScalingKind::yarn, 4), {}},
      {"yarn, attention factor 1.5", 64, 64, yarn_override, {}},
      {"yarn untruncated", 64, 64, yarn_untruncated, {}},
      {"llama3", 64, 64, scaled(ScalingKind::llama3, 8), {}},
      {"longrope", 64, 64, scaled(ScalingKind::longrope, 4), {}},
      {"mrope", 128, 128, {}, {AxisMode::mrope, {16, 24, 24}}},
      {"mrope, yarn", 128, 128, scaled(ScalingKind::yarn, 4), {AxisMode::mrope, {16, 24, 24}}},
      {"vision", 80, 80, {}, {AxisMode::vision, {20, 20, 0}}},
      {"vision, partial", 64, 40, {}, {AxisMode::vision, {10, 10, 0}}},
  };
  for (const Case& c : cases) {
    for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
      RopeSpec spec;
      spec.head_dim = c.head_dim;
      spec.rotary_dim = c.rotary_dim;
      spec.layout = layout;
      spec.angle_precision = AnglePrecision::fp32_recurrence;
      spec.scaling = c.scaling;
      spec.axes = c.axes;
      spec.pass = Pass::backward;
      SCOPED_TRACE(fmt::format("{}: {}", c.name, describe(spec)));
      const std::vector<std::int64_t> positions =
          c.axes.mode == AxisMode::vision ? std::vector<std::int64_t>{0, 0, 1, 2, 9, -4, 3, 16}
          : c.axes.mode == AxisMode::mrope ? std::vector<std::int64_t>{0, 0, 0, 5, 3, 7, -9, 12, 1, 16, 2, 11}
                                           : std::vector<std::int64_t>{0, 3, -5, 16};
      EXPECT_LT(worst_against_oracle(*ggml, spec, positions), 2e-4);
    }
  }
}

}  // namespace
}  // namespace ropecheck
