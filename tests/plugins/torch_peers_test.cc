// The PyTorch peers (peers/torch, built into ROPECHECK_PLUGIN_DIR only where find_package(Torch)
// succeeded; this test does not exist otherwise): RoPE as HF transformers and Meta's LLaMA compute
// it with torch ops, verified through the real binary (ROPECHECK_CLI_PATH) with every verdict
// pinned, scanned against the float64 oracle position by position in process, and benchmarked
// beside ropecheck's kernels with the report's "Peers" section.   ctest -L peers
//
// Re-pinning (after a change of the tolerance model, tolerance.h): run
//   build/ropecheck verify --plugin build/plugins/torch_hf.so --plugin build/plugins/torch_llama.so
//   build/tests/plugins_tests --gtest_filter='*Scan*'    (prints the scan tables)
// and copy the verdicts, the shrunk counterexample positions and the scan's bins into the tables
// below (kVerdicts, kScan). Nothing here is widened to make a peer pass: every expectation is
// a measurement, and each can fail.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <stdexcept>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "impls/oracle/oracle.h"
#include "plugins/host/plugin_host.h"
#include "impls/registry.h"
#include "core/tolerance.h"
#include "tests/support/test_process.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;
using test::slurp;
using test::spawn;
using Json = nlohmann::json;

constexpr const char* kHf = "plugin/torch_hf_rotate_half";
constexpr const char* kMeta = "plugin/torch_meta_llama_complex";

std::string hf_path() { return test::built_plugin("torch_hf"); }
std::string meta_path() { return test::built_plugin("torch_llama"); }

// ---- 1. `ropecheck verify --plugin` on both: every property's verdict -------------------------

struct Verdict {
  const char* subject;
  const char* property;
  const char* status;
  // FAILED only: the position in the shrunk counterexample's message (RapidCheck, seed 1), the
  // smallest it found failing, or its call's first position where the message names none; 0
  // otherwise.
  long position;
  const char* message = nullptr;  // FAILED only: what the message must say, where it names no position
};

// Measured with tolerance.h's fp32 angle model ((|ln theta_i|/2 + 3.5) units per radian of
// |m theta_i|: inverse frequencies formed in fp32 by powf, as torch forms them), seed 1, 100
// cases (the defaults), libtorch 1.13.1 (Debian 12): both forms pass at 0.54 and 0.53 of it.
// (Under the earlier model, which assumed a correctly rounded float(theta_i), oracle_agreement
// failed from positions 95 (HF) and 133 (Meta): torch's powf table is a few ulps off, which that
// model did not allow for.) They declare no frequency scaling, so the scaling properties skip.
// The backward (ABI 4: autograd of the same ops) passes everywhere but one finding
// (docs/findings.md): HF's partial rotary gradient turns the tail's -0 into +0 (autograd sums the
// zero-padded gradients of the two slices, and +0 + -0 = +0): shrunk to head_dim 4, rotary_dim 2,
// position 0, a tail feature of dy -0.
constexpr Verdict kVerdicts[] = {
    {kHf, "oracle_agreement", "PASSED", 0},
    {kHf, "norm_preservation", "PASSED", 0},
    {kHf, "identity_at_zero", "PASSED", 0},
    {kHf, "tail_untouched", "PASSED", 0},  // partial rotary as Phi: slice, rotate, cat
    {kHf, "boundary_shapes", "PASSED", 0},
    {kHf, "nonfinite_propagation", "PASSED", 0},
    {kHf, "call_history_independence", "PASSED", 0},
    {kHf, "inverse", "PASSED", 0},
    {kHf, "composition", "PASSED", 0},
    {kHf, "relative_position", "PASSED", 0},
    {kHf, "layout_equivalence", "SKIPPED", 0},  // half-split only
    {kHf, "linear_scaling_interpolates", "SKIPPED", 0},
    {kHf, "scaling_boundary", "SKIPPED", 0},
    {kHf, "long_range_decay", "PASSED", 0},
    // one axis: the multi-axis properties have nothing to judge
    {kHf, "axes_equal_is_1d", "SKIPPED", 0},
    {kHf, "section_locality", "SKIPPED", 0},
    {kHf, "backward_oracle_agreement", "PASSED", 0},
    {kHf, "adjoint_identity", "PASSED", 0},
    {kHf, "backward_inverts_forward", "PASSED", 0},
    {kHf, "backward_norm_preservation", "PASSED", 0},
    {kHf, "backward_tail_untouched", "FAILED", 0, "tail feature 2: -0 became 0"},  // above
    {kMeta, "oracle_agreement", "PASSED", 0},
    {kMeta, "norm_preservation", "PASSED", 0},
    {kMeta, "identity_at_zero", "PASSED", 0},
    {kMeta, "tail_untouched", "SKIPPED", 0},  // Meta's code has no partial rotary
    {kMeta, "boundary_shapes", "PASSED", 0},
    {kMeta, "nonfinite_propagation", "PASSED", 0},
    {kMeta, "call_history_independence", "PASSED", 0},
    {kMeta, "inverse", "PASSED", 0},
    {kMeta, "composition", "PASSED", 0},
    {kMeta, "relative_position", "PASSED", 0},
    {kMeta, "layout_equivalence", "SKIPPED", 0},  // interleaved only
    {kMeta, "linear_scaling_interpolates", "SKIPPED", 0},
    {kMeta, "scaling_boundary", "SKIPPED", 0},
    {kMeta, "long_range_decay", "PASSED", 0},
    {kMeta, "axes_equal_is_1d", "SKIPPED", 0},
    {kMeta, "section_locality", "SKIPPED", 0},
    {kMeta, "backward_oracle_agreement", "PASSED", 0},
    {kMeta, "adjoint_identity", "PASSED", 0},
    {kMeta, "backward_inverts_forward", "PASSED", 0},
    {kMeta, "backward_norm_preservation", "PASSED", 0},
    {kMeta, "backward_tail_untouched", "SKIPPED", 0},  // no partial rotary
};

TEST(TorchPeersVerify, EveryPropertyVerdictIsThePinnedOne) {
  const ScratchDir out("torch_peers_verify");
  const auto run = spawn({ROPECHECK_CLI_PATH, "verify", "--plugin", hf_path(), "--plugin", meta_path(),
                          "--out", out.str()});
  ASSERT_TRUE(fs::exists(out / "verify.json")) << run.out << run.err;
  const Json json = Json::parse(slurp(out / "verify.json"));
  std::map<std::pair<std::string, std::string>, Json> results;
  for (const auto& r : json.at("results")) results[{r.at("subject"), r.at("property")}] = r;
  bool any_failed = false;
  for (const Verdict& v : kVerdicts) {
    SCOPED_TRACE(fmt::format("{} {}", v.subject, v.property));
    const auto it = results.find({v.subject, v.property});
    ASSERT_NE(it, results.end()) << "no result row";
    const Json& r = it->second;
    EXPECT_EQ(r.at("status"), v.status) << r.dump(2);
    if (std::string(v.status) == "FAILED") {
      any_failed = true;
      const std::string message = r.at("message");
      const std::string call = r.at("counterexample");
      std::smatch m;
      if (v.message != nullptr) {
        EXPECT_NE(message.find(v.message), std::string::npos) << message;
        ASSERT_TRUE(std::regex_search(call, m, std::regex("positions=\\[(-?[0-9]+)"))) << call;
      } else {
        ASSERT_TRUE(std::regex_search(message, m, std::regex("position (-?[0-9]+)"))) << message;
      }
      EXPECT_EQ(std::stol(m[1]), v.position) << message;
    }
    if (std::string(v.status) == "PASSED") {
      EXPECT_GT(r.at("cases").get<int>(), 0);
    }
    results.erase(it);
  }
  // Every row verify wrote for the peers is pinned above: a new property needs a new row.
  for (const auto& [key, r] : results) {
    if (key.first == kHf || key.first == kMeta) {
      ADD_FAILURE() << "unpinned result " << key.first << " " << key.second;
    }
  }
  EXPECT_EQ(run.code, any_failed ? 1 : 0) << run.out;
}

// The multi-axis peer (torch_hf_mrope.cc, ABI 4): HF's Qwen2-VL MRoPE and Qwen3-VL interleaved
// MRoPE op for op. Every property it can be given passes, the multi-axis ones included, on the
// multi-axis specs drawn half the time, its backward (autograd) included; what it cannot be given
// is skipped by name: partial rotary (Qwen-VL rotates whole heads: no tail, forward or backward),
// the interleaved layout, frequency scaling.
TEST(TorchMropePeerVerify, EveryPropertyPassesOrIsOutsideItsDeclaration) {
  const ScratchDir out("torch_mrope_verify");
  const auto run = spawn({ROPECHECK_CLI_PATH, "verify", "--plugin", test::built_plugin("torch_hf_mrope"),
                          "--out", out.str()});
  ASSERT_TRUE(fs::exists(out / "verify.json")) << run.out << run.err;
  EXPECT_EQ(run.code, 0) << run.out;
  const Json json = Json::parse(slurp(out / "verify.json"));
  const std::set<std::string> outside = {"tail_untouched", "layout_equivalence", "linear_scaling_interpolates",
                                         "scaling_boundary", "backward_tail_untouched"};
  std::set<std::string> passed;
  for (const auto& r : json.at("results")) {
    const std::string property = r.at("property");
    EXPECT_EQ(r.at("status"), outside.count(property) != 0 ? "SKIPPED" : "PASSED") << r.dump(2);
    if (r.at("status") == "PASSED") passed.insert(property);
  }
  // The multi-axis properties ran on it (not skipped for want of a mode), and the backward ones.
  EXPECT_TRUE(passed.count("axes_equal_is_1d") && passed.count("section_locality")) << run.out;
  EXPECT_TRUE(passed.count("backward_oracle_agreement") && passed.count("adjoint_identity")) << run.out;
}

// What the peers declare (ropecheck list): fp32 angles only, each its framework's layout, partial
// rotary for HF only, both passes (ABI 4: the backward by autograd).
TEST(TorchPeersVerify, CapabilitiesAreWhatTheFrameworkCodeDoes) {
  const auto hf = load_plugin(hf_path());
  const auto meta = load_plugin(meta_path());
  EXPECT_EQ(hf->id(), kHf);
  EXPECT_EQ(meta->id(), kMeta);
  for (const auto* impl : {hf.get(), meta.get()}) {
    const auto caps = impl->capabilities();
    EXPECT_EQ(caps.angle_precisions, std::vector<AnglePrecision>{AnglePrecision::fp32}) << impl->id();
    EXPECT_EQ(caps.storage, StorageType::fp32) << impl->id();
    EXPECT_EQ(caps.passes, (std::vector{Pass::forward, Pass::backward})) << impl->id();
    EXPECT_EQ(plugin_info(*impl)->abi_version, ROPECHECK_PLUGIN_ABI_V4) << impl->id();
  }
  EXPECT_EQ(hf->capabilities().layouts, std::vector<Layout>{Layout::half_split});
  EXPECT_EQ(meta->capabilities().layouts, std::vector<Layout>{Layout::interleaved});
  EXPECT_TRUE(hf->capabilities().partial_rotary);
  EXPECT_FALSE(meta->capabilities().partial_rotary);
}

// The backward_tail_untouched finding, bit for bit: HF's partial rotary (Phi's slice, rotate, cat)
// differentiated by autograd gives the tail dy's values, but -0 as +0, in both q and k: the
// gradient reaching x is the sum of the two slices' zero-padded gradients, and +0 + -0 = +0. The
// forward's tail is the caller's own bits (cat copies it), -0 included.
TEST(TorchPeersBackward, HfPartialRotaryGradientTurnsTheTailsNegativeZeroPositive) {
  const auto hf = load_plugin(hf_path());
  RopeSpec spec;
  spec.head_dim = 8;
  spec.rotary_dim = 4;
  spec.layout = Layout::half_split;
  spec.angle_precision = AnglePrecision::fp32;
  const std::vector<float> dy = {0.5f, -1.0f, 0.25f, 2.0f, -0.0f, 3.0f, -0.0f, -7.5f};
  const std::vector<std::int64_t> positions = {5};
  for (const Pass pass : kAllPasses) {
    SCOPED_TRACE(to_string(pass));
    spec.pass = pass;
    std::vector<float> q = dy, k = dy;
    hf->apply(spec, HeadTensor{q, 1, 1, 8}, HeadTensor{k, 1, 1, 8}, positions);
    for (const auto* got : {&q, &k}) {
      for (const std::size_t f : {5u, 7u}) EXPECT_EQ((*got)[f], dy[f]) << "feature " << f;  // nonzero: exact
      for (const std::size_t f : {4u, 6u}) {
        EXPECT_EQ((*got)[f], 0.0f);
        EXPECT_EQ(std::signbit((*got)[f]), pass == Pass::forward) << "feature " << f << ": -0 in";
      }
    }
  }
}

// ---- 2. the oracle scan: error vs position, in process ----------------------------------------

// The worst error over every element of positions drawn from [2^(k-1), 2^k) (k = 0: position 0),
// as a fraction of (a) the accurate-angle bound (the fp64-angle model: what a kernel forming
// m * theta in double is held to) and (b) the peer's own fp32-angle bound (tolerance.h).
struct Bin {
  int k = 0;
  double worst_units = 0, of_accurate = 0, of_fp32 = 0;
  // Printed only, not asserted: the fp32-angle model the lead is bringing to tolerance.h
  // (kRoundingUnits + (|ln theta_i| / 2 + 3) |m theta_i|), as a prediction of the re-pinning.
};

std::vector<Bin> scan(const RopeImpl& impl, Layout layout, double base, int head_dim) {
  RopeSpec spec;
  spec.head_dim = head_dim;
  spec.rotary_dim = head_dim;
  spec.layout = layout;
  spec.base = base;
  spec.angle_precision = AnglePrecision::fp32;
  const auto theta = oracle_inverse_frequencies(spec);
  const ErrorModel fp32{AnglePrecision::fp32, StorageType::fp32};
  const ErrorModel accurate{AnglePrecision::fp64, StorageType::fp32};
  const std::size_t half = static_cast<std::size_t>(head_dim / 2);
  std::vector<Bin> bins;
  for (int k = 0; k <= 24; ++k) {
    std::vector<std::int64_t> positions;
    if (k == 0) {
      positions = {0};
    } else {
      const std::int64_t low = std::int64_t{1} << (k - 1);
      for (std::int64_t j = 0; j < 32; ++j) {
        const std::int64_t m = low + (low * j) / 32 + (j % 5);  // odd ones too: 2^k * theta is exact
        if (m < 2 * low && (positions.empty() || m != positions.back())) positions.push_back(m);
      }
    }
    const auto tokens = static_cast<std::int64_t>(positions.size());
    std::vector<float> q(static_cast<std::size_t>(tokens * head_dim));
    for (std::size_t i = 0; i < q.size(); ++i) q[i] = std::sin(0.37f * static_cast<float>(i) + 0.1f);
    const std::vector<float> in = q;
    std::vector<float> k_also = q;  // rotated too, not read
    impl.apply(spec, HeadTensor{q, tokens, 1, head_dim}, HeadTensor{k_also, tokens, 1, head_dim}, positions);
    const auto want = oracle_rope(spec, in, tokens, 1, positions);
    Bin bin{k};
    for (std::int64_t t = 0; t < tokens; ++t) {
      const std::int64_t m = positions[static_cast<std::size_t>(t)];
      for (std::size_t i = 0; i < half; ++i) {
        const std::size_t row = static_cast<std::size_t>(t * head_dim);
        const std::size_t a = row + (layout == Layout::interleaved ? 2 * i : i);
        const std::size_t b = row + (layout == Layout::interleaved ? 2 * i + 1 : i + half);
        const double pair = std::hypot(double{in[a]}, double{in[b]});
        for (const std::size_t at : {a, b}) {
          const double units = std::abs(q[at] - want[at]) / (kEps32 * pair);
          bin.worst_units = std::max(bin.worst_units, units);
          bin.of_accurate = std::max(bin.of_accurate, units / rotation_bound_units(accurate, m, double(theta[i]), int(i)));
          bin.of_fp32 = std::max(bin.of_fp32, units / rotation_bound_units(fp32, m, double(theta[i]), int(i)));
        }
      }
    }
    bins.push_back(bin);
  }
  return bins;
}

// The scan's two findings: the last bin k such that every position below 2^k is within the
// accurate-angle bound, and the first bin whose worst error exceeds the peer's own fp32 bound
// (-1: none up to 2^24).
struct ScanFinding {
  const char* subject;
  double base;
  int accurate_through;  // every position < 2^accurate_through within the accurate bound
  int first_over_fp32;   // -1: within the fp32-angle bound everywhere up to 2^24
};

// Measured with tolerance.h's fp32 angle model (see kVerdicts), head_dim 128: accurate only
// below 2^3 (base 1e4) or 2^2 (5e5), within their own fp32-angle bound all the way to 2^24.
constexpr ScanFinding kScan[] = {
    {kHf, 10000.0, 3, -1},
    {kHf, 500000.0, 2, -1},
    {kMeta, 10000.0, 3, -1},
    {kMeta, 500000.0, 2, -1},
};

TEST(TorchPeersScan, ErrorVsPositionAgainstTheAccurateAndTheFp32Bounds) {
  const auto hf = load_plugin(hf_path());
  const auto meta = load_plugin(meta_path());
  for (const ScanFinding& f : kScan) {
    const bool is_hf = std::string(f.subject) == kHf;
    const auto bins = scan(is_hf ? *hf : *meta, is_hf ? Layout::half_split : Layout::interleaved, f.base, 128);
    std::cout << fmt::format("{} base {:g}, head_dim 128: bin k = positions in [2^(k-1), 2^k)\n", f.subject, f.base)
              << "   k  worst (eps32*|pair|)  of accurate bound  of fp32 bound\n";
    int accurate_through = -1, first_over = -1;
    bool still_accurate = true;
    for (const Bin& b : bins) {
      std::cout << fmt::format("  {:2d}  {:19.4g}  {:17.3g}  {:13.3g}\n", b.k, b.worst_units, b.of_accurate,
                               b.of_fp32);
      if (still_accurate && b.of_accurate <= 1) accurate_through = b.k;  // bin k: below 2^k
      if (b.of_accurate > 1) still_accurate = false;
      if (first_over < 0 && b.of_fp32 > 1) first_over = b.k;
    }
    std::cout << fmt::format("  -> within the accurate bound below 2^{}; first bin over the fp32 bound: {}\n",
                             accurate_through, first_over);
    EXPECT_EQ(accurate_through, f.accurate_through) << f.subject << " base " << f.base;
    EXPECT_EQ(first_over, f.first_over_fp32) << f.subject << " base " << f.base;
  }
}

// Relative-position invariance at large shifts: q at m + s and k at n + s, m - n = 7, head_dim
// 128; the score q.k against the float64 oracle's score at distance 7, in units of
// eps32 * sum_p |q_p| |k_p| (what relative_position measures), for s = 2^k. Returns per k.
std::vector<double> shift_scan(const RopeImpl& impl, Layout layout, double base,
                               AnglePrecision angles = AnglePrecision::fp32) {
  RopeSpec spec;
  spec.head_dim = 128;
  spec.rotary_dim = 128;
  spec.layout = layout;
  spec.base = base;
  spec.angle_precision = angles;
  std::vector<float> q0(128), k0(128);
  for (std::size_t i = 0; i < 128; ++i) {
    q0[i] = std::sin(0.37f * static_cast<float>(i) + 0.1f);
    k0[i] = std::cos(0.21f * static_cast<float>(i) + 0.3f);
  }
  const std::vector<std::int64_t> at_zero = {7, 0};
  const auto want_q = oracle_rope(spec, q0, 1, 1, std::span(at_zero).first(1));
  const auto want_k = oracle_rope(spec, k0, 1, 1, std::span(at_zero).last(1));
  double want = 0, scale = 0;
  for (std::size_t i = 0; i < 128; ++i) want += want_q[i] * want_k[i];
  const std::size_t half = 64;
  for (std::size_t i = 0; i < half; ++i) {
    const std::size_t a = layout == Layout::interleaved ? 2 * i : i;
    const std::size_t b = layout == Layout::interleaved ? 2 * i + 1 : i + half;
    scale += std::hypot(double{q0[a]}, double{q0[b]}) * std::hypot(double{k0[a]}, double{k0[b]});
  }
  std::vector<double> units;
  for (int k = 0; k <= 23; ++k) {  // 7 + 2^24 is past the ABI's |m| <= 2^24
    const std::int64_t s = std::int64_t{1} << k;
    std::vector<std::int64_t> positions = {7 + s, s};  // token 0: q's, token 1: k's
    std::vector<float> q(256), kk(256);
    std::copy(q0.begin(), q0.end(), q.begin());
    std::copy(k0.begin(), k0.end(), kk.begin() + 128);
    impl.apply(spec, HeadTensor{q, 2, 1, 128}, HeadTensor{kk, 2, 1, 128}, positions);
    double got = 0;
    for (std::size_t i = 0; i < 128; ++i) got += double{q[i]} * double{kk[128 + i]};
    units.push_back(std::abs(got - want) / (kEps32 * scale));
  }
  return units;
}

// ropecheck's fastest kernel this CPU runs (the registry lists kernel levels from scalar up).
const RopeImpl& best_kernel() {
  const RopeImpl* best = nullptr;
  for (const RopeImpl* impl : rope_implementations()) {
    if (impl->id().starts_with("kernel/") && impl->capabilities().available) best = impl;
  }
  if (best == nullptr) throw std::runtime_error("no kernel/ implementation");
  return *best;
}

// Printed (the README's table) and pinned coarsely: at shifts of 2^20 and more both peers' scores
// are off by more than 100 eps32 * sum|q_p||k_p| (their fp32 angles), ropecheck's fp64-angle
// kernel by less than 10 (measured: under 1 for kernel/avx512 here; peers at least 772).
TEST(TorchPeersScan, RelativePositionAtLargeShifts) {
  const auto hf = load_plugin(hf_path());
  const auto meta = load_plugin(meta_path());
  const RopeImpl& kernel = best_kernel();
  for (const double base : {10000.0, 500000.0}) {
    const auto a = shift_scan(*hf, Layout::half_split, base);
    const auto b = shift_scan(*meta, Layout::interleaved, base);
    const auto c = shift_scan(kernel, Layout::interleaved, base, AnglePrecision::fp64);
    std::cout << fmt::format("q.k at positions (7 + s, s) vs the oracle at distance 7, base {:g}, head_dim 128, "
                             "in eps32 * sum|q_p||k_p|\n   k  s = 2^k   {:>12}  {:>12}  {:>14}\n", base, "HF",
                             "Meta", std::string(kernel.id()) + " fp64");
    for (std::size_t k = 0; k < a.size(); ++k) {
      std::cout << fmt::format("  {:2d}  {:9d}  {:12.4g}  {:12.4g}  {:14.4g}\n", k, std::int64_t{1} << k, a[k], b[k], c[k]);
      if (k >= 20) {
        EXPECT_GT(a[k], 100) << "HF, base " << base << ", shift 2^" << k;
        EXPECT_GT(b[k], 100) << "Meta, base " << base << ", shift 2^" << k;
        EXPECT_LT(c[k], 10) << kernel.id() << ", base " << base << ", shift 2^" << k;
      }
    }
  }
}

// ---- 3. threads: torch's pool is created in the worker, after the fork ------------------------

// ROPECHECK_PLUGIN_THREADS=2 (torch's intra-op pool of 2, OpenMP, first created in the forked
// worker) on a case large enough for ATen to split: same bits as one thread, and no hang.
TEST(TorchPeersThreads, TwoTorchThreadsInTheWorkerGiveTheSameBits) {
  RopeSpec spec;
  spec.head_dim = 128;
  spec.rotary_dim = 128;
  spec.angle_precision = AnglePrecision::fp32;
  const std::int64_t tokens = 512, heads = 8;
  std::vector<std::int64_t> positions(static_cast<std::size_t>(tokens));
  for (std::size_t t = 0; t < positions.size(); ++t) positions[t] = 1000 + static_cast<std::int64_t>(t);
  std::vector<float> input(static_cast<std::size_t>(tokens * heads * 128));
  for (std::size_t i = 0; i < input.size(); ++i) input[i] = std::cos(0.01f * static_cast<float>(i));
  for (const auto& [path, layout] : {std::pair{hf_path(), Layout::half_split}, {meta_path(), Layout::interleaved}}) {
    spec.layout = layout;
    std::vector<std::vector<float>> outputs;
    for (const char* threads : {"1", "2"}) {
      setenv("ROPECHECK_PLUGIN_THREADS", threads, 1);  // inherited by the worker load_plugin forks
      const auto impl = load_plugin(path);
      auto q = input, k = input;
      impl->apply(spec, HeadTensor{q, tokens, heads, 128}, HeadTensor{k, tokens, heads, 128}, positions);
      EXPECT_EQ(q, k) << path;
      outputs.push_back(std::move(q));
    }
    unsetenv("ROPECHECK_PLUGIN_THREADS");
    EXPECT_EQ(outputs[0], outputs[1]) << path;
    EXPECT_NE(outputs[0], input) << path;
  }
}

// ---- 4. `ropecheck bench --plugin` both, beside the kernels, and the report's Peers section ----

TEST(TorchPeersBench, ReportHasAPeersSectionWithBothPeersBesideTheBestKernel) {
  const ScratchDir out("torch_peers_bench");
  const auto run = spawn({ROPECHECK_CLI_PATH, "bench", "--plugin", hf_path(), "--plugin", meta_path(),
                          "--filter", "^(plugin/torch_[a-z_]+|kernel/[a-z0-9]+)/llama7b_decode_at4095/",
                          "--repetitions", "1", "--min-time", "0.01", "--threads", "1", "--out", out.str()});
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  const Json bench = Json::parse(slurp(out / "bench.json"));
  std::map<std::string, double> fraction;
  for (const auto& b : bench.at("benchmarks")) fraction[b.at("run_name")] = b.value("limit_fraction", -1.0);
  // Timed in the worker (manual time): the plugins' own names (bench/format/case_name.h).
  for (const char* name : {"plugin/torch_hf_rotate_half/llama7b_decode_at4095/half_split/threads:1/manual_time",
                           "plugin/torch_meta_llama_complex/llama7b_decode_at4095/interleaved/threads:1/manual_time"}) {
    ASSERT_TRUE(fraction.contains(name)) << name << "\n" << run.out;
    EXPECT_GT(fraction[name], 0) << name;
    EXPECT_LT(fraction[name], 1) << name;  // torch's op-by-op form is not at the limit
  }
  EXPECT_EQ(bench.at("context").value("ropecheck_plugin_threads", ""), "1");

  const auto report = spawn({ROPECHECK_CLI_PATH, "report", "--in", out.str()});
  ASSERT_EQ(report.code, 0) << report.out << report.err;
  const std::string md = slurp(out / "report.md");
  const auto section = md.find("### Peers");
  ASSERT_NE(section, std::string::npos) << md;
  const std::string peers = md.substr(section);
  for (const char* peer : {"plugin/torch_hf_rotate_half/threads:1", "plugin/torch_meta_llama_complex/threads:1"}) {
    // shape | layout | peer | rate | limit_fraction | best kernel | kernel rate | ratio
    const std::regex row(std::string("llama7b_decode_at4095 *\\| *[a-z_]+ *\\| *") + peer +
                         " *\\|[^|]+\\|[^|]+\\| *kernel/[a-z0-9]+ *\\|[^|]+\\| *([0-9.]+) *\\|");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(peers, m, row)) << peer << "\n" << peers;
    EXPECT_GT(std::stod(m[1]), 0) << peer;
  }
  EXPECT_NE(slurp(out / "report.html").find("Peers"), std::string::npos);
}

}  // namespace
}  // namespace ropecheck
