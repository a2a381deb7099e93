// The fused RoPE + paged KV-cache PyTorch peers (peers/torch: torch_vllm_cache.cc,
// torch_flashinfer_cache.cc; built, and this test compiled, only where find_package(Torch)
// succeeded): each loads as an ABI 5 plugin declaring what its engine does, `verify --plugin`
// judges its fused side with every fused property through the real binary (ROPECHECK_CLI_PATH),
// and its cache bytes match the plain C example plugin (plugins/examples/fused_cache_rope.c) on
// the same calls.   ctest -R TorchFusedPeers
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/kv_cache.h"
#include "impls/fused/rope_cache_impl.h"
#include "plugins/host/plugin_rope_cache.h"
#include "plugins/host/plugin_subjects.h"
#include "tests/support/fused_call.h"
#include "tests/support/test_process.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;
using FusedJson = nlohmann::json;

constexpr const char* kVllm = "plugin/torch_vllm_cache";
constexpr const char* kFlashInfer = "plugin/torch_flashinfer_cache";
constexpr const char* kTorchExample = "plugin/fused_cache_rope";
const std::vector<std::string> kTorchFusedProperties = {"cache_oracle_agreement", "cache_untouched_elsewhere",
                                                   "padding_inert", "fp8_saturates", "cache_dequantized_bound"};

// ---- 1. what each peer declares: its engine's conventions --------------------------------------

TEST(TorchFusedPeers, EachDeclaresItsEnginesLayoutsScaleDirectionAndPaddingRule) {
  const LoadedPlugins loaded =
      load_plugins({test::built_plugin("torch_vllm_cache"), test::built_plugin("torch_flashinfer_cache")}, {});
  std::map<std::string, RopeCacheCapabilities> caps;
  for (const auto& impl : loaded.rope_cache) caps[std::string(impl->id())] = impl->capabilities();
  ASSERT_EQ(caps.size(), 2u);
  const std::vector<CacheStorage> every = {CacheStorage::fp32, CacheStorage::bf16, CacheStorage::fp16,
                                           CacheStorage::fp8_e4m3, CacheStorage::fp8_e5m2};
  // vLLM: the flash layout and MLA, x / scale, a padding token's q rotated.
  EXPECT_EQ(caps[kVllm].layouts, (std::vector{CacheLayout::nhd, CacheLayout::mla}));
  EXPECT_EQ(caps[kVllm].storages, every);
  EXPECT_EQ(caps[kVllm].directions, std::vector{ScaleDirection::divide});
  EXPECT_EQ(caps[kVllm].padding, PaddingRule::rotate_q_only);
  // FlashInfer: NHD, HND and MLA, x * scale, only the appended (valid) tokens touched.
  EXPECT_EQ(caps[kFlashInfer].layouts, (std::vector{CacheLayout::nhd, CacheLayout::hnd, CacheLayout::mla}));
  EXPECT_EQ(caps[kFlashInfer].storages, every);
  EXPECT_EQ(caps[kFlashInfer].directions, std::vector{ScaleDirection::multiply});
  EXPECT_EQ(caps[kFlashInfer].padding, PaddingRule::skip_token);
}

// ---- 2. `verify --plugin`: every fused property passes ------------------------------------------

// Both peers declare FP8 (written with torch ops: fused_cache_common.h, fp8_bits), so nothing is
// skipped: fp8_saturates judges their clamp, and cache_dequantized_bound their rounding to the grid.
// Seen failing: with fp8_bits's round() replaced by trunc(), cache_oracle_agreement (1.32 of its
// bound) and cache_dequantized_bound FAILED on both peers.
TEST(TorchFusedPeers, VerifyPassesEveryFusedProperty) {
  for (const char* peer : {"torch_vllm_cache", "torch_flashinfer_cache"}) {
    SCOPED_TRACE(peer);
    const test::ScratchDir out(fmt::format("torch_fused_verify_{}", peer));
    std::vector<std::string> args = {ROPECHECK_CLI_PATH, "verify", "--plugin", test::built_plugin(peer), "--impl",
                                     fmt::format("plugin/{}", peer), "--out", out.str()};
    for (const auto& p : kTorchFusedProperties) args.insert(args.end(), {"--property", p});
    const auto run = test::spawn(args);
    ASSERT_TRUE(fs::exists(out / "verify.json")) << run.out << run.err;
    EXPECT_EQ(run.code, 0) << run.out;
    const FusedJson json = FusedJson::parse(test::slurp(out / "verify.json"));
    std::map<std::string, std::string> status;
    for (const auto& r : json.at("results")) status[r.at("property")] = r.at("status");
    for (const auto& p : kTorchFusedProperties) EXPECT_EQ(status[p], "PASSED") << p << "\n" << run.out;
  }
}

// ---- 3. the same cache bytes as the C example on the same call ----------------------------------

using TorchSameCall = test::FusedCallBuffers;

TorchSameCall torch_same_call(CacheLayout layout, CacheStorage storage, ScaleDirection direction, PaddingRule padding,
                              std::int64_t position) {
  // tests/support/fused_call.h's small call with a seventh token at slot 0 and scales of its own.
  TorchSameCall c = test::small_paged_call(layout, storage, direction, padding);
  const bool mla = layout == CacheLayout::mla;
  c.tokens = 7;
  c.slots.push_back(0);  // blocks crossed, gaps, padding, and the cache's first slot
  c.spec.layout = Layout::interleaved;
  c.spec.angle_precision = AnglePrecision::fp32;
  if (is_fp8(storage)) {
    c.cache.k_scale = mla ? std::vector<float>{0.03f} : std::vector<float>{0.03f, 40.0f};  // per head
    if (!mla) c.cache.v_scale = {0.07f};
  }
  // Up to +-20: past e4m3's 448 divided by 0.03 or times 40, so saturation is on the compared path.
  const auto fill = [](std::int64_t n, float phase) {
    return test::sine_values(static_cast<std::size_t>(n), phase, 0.77f, 20.0f);
  };
  c.q = fill(c.tokens * c.q_heads * 8, 0.1f);
  c.k = fill(c.tokens * c.cache.kv_heads * 8, 0.2f);
  c.v = fill(c.tokens * c.cache.kv_heads * (mla ? 6 : 8), 0.3f);
  c.positions.assign(static_cast<std::size_t>(c.tokens), position);
  test::fill_caches_with(c, std::byte{0x5A});
  return c;
}

void torch_run_on(const RopeCacheImpl& impl, TorchSameCall& c) {
  c.cache.padding = impl.capabilities().padding;  // padding writes nothing under either rule
  RopeCacheCall call = c.call();
  // Each its own angle formation: the peers fp32 (torch's), the example fp64.
  call.spec.angle_precision = impl.rope_capabilities().angle_precisions.front();
  impl.apply(call);
}

// Ordered integers of 16-bit float patterns: neighbours differ by 1 (same sign).
int torch_ordered16(std::uint16_t bits) { return (bits & 0x8000) ? -(bits & 0x7FFF) : (bits & 0x7FFF); }

std::string torch_cache_name(CacheLayout layout, CacheStorage storage) {
  return fmt::format("{} {}", to_string(layout), to_string(storage));
}

class TorchFusedPeersBytes : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    loaded_ = new LoadedPlugins(load_plugins({test::built_plugin("torch_vllm_cache"),
                                              test::built_plugin("torch_flashinfer_cache"),
                                              test::built_plugin("fused_cache_rope")},
                                             {}));
  }
  static void TearDownTestSuite() {
    delete loaded_;
    loaded_ = nullptr;
  }
  static const RopeCacheImpl& impl(std::string_view id) {
    for (const auto& i : loaded_->rope_cache) {
      if (i->id() == id) return *i;
    }
    throw std::runtime_error(fmt::format("{} not loaded", id));
  }
  struct Peer {
    const char* id;
    std::vector<CacheLayout> layouts;
    ScaleDirection direction;
  };
  static std::vector<Peer> peers() {
    return {{kVllm, {CacheLayout::nhd, CacheLayout::mla}, ScaleDirection::divide},
            {kFlashInfer, {CacheLayout::nhd, CacheLayout::hnd, CacheLayout::mla}, ScaleDirection::multiply}};
  }
  static inline LoadedPlugins* loaded_ = nullptr;
};

// At position 0 both rotations are the identity bit for bit (cos 1 and sin 0 exactly, in fp32 and
// in double: x * 1 - y * 0 = x), so what is compared is the write alone: slot mapping, layout,
// storage casts, the scale's direction, FP8 saturation and rounding. Every cache byte must be the
// C example's, on every layout and storage each peer declares, the padding slots' and the
// unaddressed ones' (0x5A) included. Seen failing: with fp8_bits's round() replaced by trunc(),
// every FP8 case of both peers differed (NHD, HND and MLA; e4m3 and e5m2), the others still equal.
TEST_F(TorchFusedPeersBytes, TheWriteIsTheCExamplesBitForBitOnEveryStorage) {
  const RopeCacheImpl& example = impl(kTorchExample);
  for (const Peer& peer : peers()) {
    for (const CacheLayout layout : peer.layouts) {
      for (const CacheStorage storage : {CacheStorage::fp32, CacheStorage::bf16, CacheStorage::fp16,
                                         CacheStorage::fp8_e4m3, CacheStorage::fp8_e5m2}) {
        SCOPED_TRACE(fmt::format("{} {}", peer.id, torch_cache_name(layout, storage)));
        TorchSameCall a = torch_same_call(layout, storage, peer.direction, PaddingRule::rotate_q_only, 0);
        TorchSameCall b = a;
        torch_run_on(impl(peer.id), a);
        torch_run_on(example, b);
        EXPECT_TRUE(a.k_cache == b.k_cache);
        EXPECT_TRUE(a.v_cache == b.v_cache);
      }
    }
  }
}

// At real positions the angles differ (the peers form them in fp32 as the engines' torch code
// does, the example in double): v's cache must still be the example's bit for bit (it is not
// rotated), and k's, in a 16-bit storage, within one unit of that storage's last place (the fp32
// results differ by a few fp32 ulps, far below a bf16 or fp16 step, so they round to the same
// value or to neighbours). Seen failing: with the pair layout inverted in forward_native (NeoX
// pairs for GPT-J's), 80 k elements differed by up to 39799 units, on both peers and storages
// (the position-0 test above still passed: there the rotation is the identity in any layout).
TEST_F(TorchFusedPeersBytes, AtRealPositionsVIsExactAndKWithinOneUnitOf16BitStorage) {
  const RopeCacheImpl& example = impl(kTorchExample);
  for (const Peer& peer : peers()) {
    for (const CacheStorage storage : {CacheStorage::bf16, CacheStorage::fp16}) {
      SCOPED_TRACE(fmt::format("{} {}", peer.id, torch_cache_name(CacheLayout::nhd, storage)));
      TorchSameCall a = torch_same_call(CacheLayout::nhd, storage, peer.direction, PaddingRule::rotate_q_only, 37);
      TorchSameCall b = a;
      torch_run_on(impl(peer.id), a);
      torch_run_on(example, b);
      EXPECT_TRUE(a.v_cache == b.v_cache);
      ASSERT_EQ(a.k_cache.size(), b.k_cache.size());
      int worst = 0, differing = 0;
      for (std::size_t i = 0; i < a.k_cache.size(); i += 2) {
        std::uint16_t x, y;
        std::memcpy(&x, &a.k_cache[i], 2);
        std::memcpy(&y, &b.k_cache[i], 2);
        worst = std::max(worst, std::abs(torch_ordered16(x) - torch_ordered16(y)));
        differing += x != y;
      }
      EXPECT_LE(worst, 1) << differing << " elements differ";
    }
  }
}

}  // namespace
}  // namespace ropecheck
