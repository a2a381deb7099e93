// `ropecheck check --kind rope_cache` on the fused call's golden cases, as a porter of a fused
// kernel runs it: the oracle's outputs rounded once pass; every registered fused implementation
// (rope_then_write/<level>: a real fp32 rotation, scaling and narrowing) passes within the
// manifest's bounds; outputs made by each bug class of issue 56 fail that case, and only that one,
// with the call named (slots, block size, layout, storage, scale and direction) and the first
// wrong element as (token, head, feature) -> (block, offset); bad outputs exit 2 naming the file.
//   cmake --build build --target vectors_tests && build/tests/vectors_tests --gtest_filter='RopeCacheCheck*'
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/exit_codes.h"
#include "core/kv_cache.h"
#include "impls/fused/two_pass_rope_cache.h"
#include "impls/registry.h"
#include "tests/support/fused_call.h"
#include "tests/support/in_process_cli.h"
#include "tests/support/test_process.h"
#include "vectors/check.h"
#include "vectors/manifest_reader.h"
#include "vectors/npy.h"
#include "vectors/rope_cache_golden_cases.h"
#include "vectors/rope_cache_manifest.h"
#include "vectors/vectors.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using test::ScratchDir;

// One case's outputs as a port writes them: q and the whole caches.
struct PortOutputs {
  std::vector<float> q;
  std::vector<std::byte> k_cache, v_cache;
};

class RopeCacheCheck : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir("ropecheck_rope_cache_check");
    std::ostringstream out;
    ASSERT_EQ(run_vectors(VectorsOptions{vectors()}, out), kExitOk);
    manifest_ = new Manifest(read_manifest(vectors()));
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete manifest_;
  }
  static fs::path vectors() { return *dir_ / "golden"; }
  static const ManifestCase& case_named(const std::string& name) {
    for (const auto& c : manifest_->cases) {
      if (c.name == name) return c;
    }
    throw std::runtime_error("no case " + name);
  }
  static std::vector<const ManifestCase*> fused_cases() {
    std::vector<const ManifestCase*> cases;
    for (const auto& c : manifest_->cases) {
      if (c.kind == "rope_cache") cases.push_back(&c);
    }
    return cases;
  }
  static bool mla(const ManifestCase& c) { return c.cache.layout == CacheLayout::mla; }

  // The ideal port: q_expected_fp32 and the caches' expected bytes (the oracle rounded once).
  static PortOutputs ideal(const ManifestCase& c) {
    const std::string storage(to_string(c.cache.storage));
    PortOutputs out;
    out.q = read_npy(c.file("q_expected_fp32").path).as_float32();
    out.k_cache = read_npy(c.file("k_cache_expected_" + storage).path).data;
    if (!mla(c)) out.v_cache = read_npy(c.file("v_cache_expected_" + storage).path).data;
    return out;
  }

  // What `impl` leaves after the case's call, from the case's inputs and initial caches; `edit`
  // changes the call first (a buggy port's view of it).
  template <typename Edit>
  static PortOutputs run_port(const RopeCacheImpl& impl, const ManifestCase& c, const Edit& edit) {
    test::FusedCallBuffers b;
    b.spec = c.rope_spec;
    b.cache = c.cache;
    b.tokens = c.tokens;
    b.q_heads = c.q_heads;
    b.q = read_npy(c.file("q").path).as_float32();
    b.k = read_npy(c.file("k").path).as_float32();
    b.v = read_npy(c.file("v").path).as_float32();
    b.positions = read_npy(c.file("positions").path).as_int64();
    b.slots = read_npy(c.file("slots").path).as_int64();
    b.k_cache = read_npy(c.file("k_cache_initial").path).data;
    if (!mla(c)) b.v_cache = read_npy(c.file("v_cache_initial").path).data;
    RopeCacheCall call = b.call();
    edit(call, b.slots);
    impl.apply(call);
    return PortOutputs{std::move(b.q), std::move(b.k_cache), std::move(b.v_cache)};
  }
  static PortOutputs run_port(const RopeCacheImpl& impl, const ManifestCase& c) {
    return run_port(impl, c, [](RopeCacheCall&, std::vector<std::int64_t>&) {});
  }

  static void write(const fs::path& out, const ManifestCase& c, const PortOutputs& outputs) {
    fs::create_directories(out / c.name);
    const auto& q_shape = c.file("q").shape;
    write_npy(out / c.name / "q_out.npy", outputs.q, q_shape);
    const char* descr = cache_descr(c.cache.storage);
    const auto shape = cache_shape(c.cache);
    write_npy(out / c.name / "k_cache_out.npy", descr, shape, outputs.k_cache);
    if (!mla(c)) write_npy(out / c.name / "v_cache_out.npy", descr, shape, outputs.v_cache);
  }
  static void write_all_ideal(const fs::path& out) {
    for (const ManifestCase* c : fused_cases()) write(out, *c, ideal(*c));
  }

  static test::CliRun check(const fs::path& out) {
    return test::run_in_process(
        {"check", "--vectors", vectors().string(), "--outputs", out.string(), "--kind", "rope_cache"});
  }

  // Every fused case passes but `failing`, which fails with every part of `mentions` in the output.
  static void expect_only_failure(const fs::path& out, const std::string& failing,
                                  const std::vector<std::string>& mentions) {
    const test::CliRun run = check(out);
    EXPECT_EQ(run.code, kExitFailed) << run.out << run.err;
    EXPECT_TRUE(test::contains(run.out, "1 failed")) << run.out;
    EXPECT_TRUE(test::contains(run.out, "FAIL    " + failing + " ")) << run.out;
    for (const auto& part : mentions) EXPECT_TRUE(test::contains(run.out, part)) << "'" << part << "' not in:\n" << run.out;
  }

  // Every case's ideal outputs but `c`'s, which are `buggy`: the check fails that case alone,
  // its output saying each of `mentions`.
  static void expect_bug_fails_alone(const ManifestCase& c, const PortOutputs& buggy,
                                     const std::vector<std::string>& mentions) {
    const ScratchDir out("ropecheck_rope_cache_bug");
    write_all_ideal(out.path());
    write(out.path(), c, buggy);
    expect_only_failure(out.path(), c.name, mentions);
  }

  static ScratchDir* dir_;
  static Manifest* manifest_;
};

ScratchDir* RopeCacheCheck::dir_ = nullptr;
Manifest* RopeCacheCheck::manifest_ = nullptr;

TEST_F(RopeCacheCheck, TheOraclesOutputsRoundedOncePassEveryCase) {
  const ScratchDir out("ropecheck_rope_cache_ideal");
  write_all_ideal(out.path());
  const test::CliRun run = check(out.path());
  EXPECT_EQ(run.code, kExitOk) << run.out << run.err;
  const auto count = golden_rope_cache_cases().size();
  EXPECT_TRUE(test::contains(run.out, fmt::format("check: {} rope_cache cases, {} passed, 0 failed, 0 missing", count, count)))
      << run.out;
  for (const auto& c : golden_rope_cache_cases()) EXPECT_TRUE(test::contains(run.out, "PASS    " + c.name)) << c.name;
}

// A real port: each registered fused implementation that runs the case's call (its layout,
// storage, direction and padding rule), and the two passes over kernel/scalar with rotate_q_only,
// is within every bound. Its rotation, fp32 scaling and narrowing are the error the bound is
// derived for; the worst ratio is recorded.
TEST_F(RopeCacheCheck, EveryFusedImplementationMeetsTheBounds) {
  const RopeImpl* scalar = find_rope("kernel/scalar");
  ASSERT_NE(scalar, nullptr);
  const auto rotate_q_only = make_two_pass_rope_cache(*scalar, PaddingRule::rotate_q_only);
  std::vector<const RopeCacheImpl*> impls(rope_cache_implementations().begin(), rope_cache_implementations().end());
  impls.push_back(rotate_q_only.get());
  for (const ManifestCase* c : fused_cases()) {
    int judged = 0;
    for (const RopeCacheImpl* impl : impls) {
      const RopeCacheCapabilities caps = impl->capabilities();
      if (!impl->available() || caps.padding != c->cache.padding || !caps.why_unsupported(c->cache).empty()) continue;
      const ScratchDir out("ropecheck_rope_cache_port");
      write(out.path(), *c, run_port(*impl, *c));
      CheckOptions options;
      options.vectors_dir = vectors();
      options.outputs_dir = out.path();
      options.kind = "rope_cache";
      options.only_present = true;
      const CheckReport report = check_outputs(options);
      for (const CaseCheck& row : report.cases) {
        if (row.name != c->name) continue;
        EXPECT_EQ(row.verdict, CheckVerdict::pass) << impl->id() << " " << c->name << ": " << row.worst.where;
        RecordProperty(std::string(impl->id()) + "/" + c->name, std::to_string(row.worst.ratio));
        ++judged;
      }
    }
    EXPECT_GE(judged, 1) << c->name;  // rope_then_write/scalar or the rotate_q_only two passes
  }
}

const RopeCacheImpl& two_pass() {
  const RopeCacheImpl* impl = find_rope_cache("rope_then_write/scalar");
  if (impl == nullptr) throw std::runtime_error("rope_then_write/scalar is not registered");
  return *impl;
}

// vLLM PR #43869: a padding token's slot -1 used as an index wrote the cache's last slot. Here a
// rotate_q_only case (q rotated either way), the padding token written at slot 127.
TEST_F(RopeCacheCheck, SlotMinusOneWrittenIntoTheLastSlotFailsNamingThatSlot) {
  const ManifestCase& c = case_named("nhd_fp8_e5m2_bs64_per_tensor_divide");
  ASSERT_EQ(c.cache.padding, PaddingRule::rotate_q_only);
  // The two passes with skip_token write the same cache; q is the ideal one (rotate_q_only).
  PortOutputs buggy = run_port(two_pass(), c, [&](RopeCacheCall& call, std::vector<std::int64_t>& slots) {
    call.cache.padding = PaddingRule::skip_token;  // the two passes' rule; no token is padding now
    for (auto& slot : slots) slot = slot < 0 ? cache_slots(call.cache) - 1 : slot;
  });
  buggy.q = ideal(c).q;
  expect_bug_fails_alone(c, buggy,
                         {"call: layout nhd, storage fp8_e5m2, block_size 64 (2 blocks), kv_heads 2, head_dim 64, "
                       "k_scale [0.0213] v_scale [0.0178] per tensor, divide (stored = x / scale), padding "
                       "rotate_q_only, slots [70, 5, 64, 6, -1]",
                       "first wrong: k_cache (block 1, offset 63, head 0, feature 0) = slot 127, addressed by no "
                       "valid slot, must keep its bits"});
}

// Block and offset swapped: each token's row written at (offset, block) where that lies in the
// cache, its own place left as it was. Token 0's slot 31 (block 0, offset 31) has no swapped
// place in a 2-block cache: its row is simply missing.
TEST_F(RopeCacheCheck, BlockAndOffsetSwappedFailsNamingTheTokensPlace) {
  const ManifestCase& c = case_named("hnd_fp8_e4m3_bs32_per_head_multiply_trtllm");
  const PortOutputs right = ideal(c);
  PortOutputs buggy = right;
  buggy.k_cache = read_npy(c.file("k_cache_initial").path).data;
  buggy.v_cache = read_npy(c.file("v_cache_initial").path).data;
  const auto slots = read_npy(c.file("slots").path).as_int64();
  const std::int64_t features = row_features(c.cache);
  for (const std::int64_t slot : slots) {
    const std::int64_t swapped = (slot % c.cache.block_size) * c.cache.block_size + slot / c.cache.block_size;
    if (slot < 0 || swapped >= cache_slots(c.cache)) continue;
    for (std::int64_t h = 0; h < c.cache.kv_heads; ++h) {
      for (std::int64_t f = 0; f < features; ++f) {
        const auto from = static_cast<std::size_t>(cache_index(c.cache, slot, h, f));
        const auto to = static_cast<std::size_t>(cache_index(c.cache, swapped, h, f));
        buggy.k_cache[to] = right.k_cache[from];  // FP8: one byte per element
        buggy.v_cache[to] = right.v_cache[from];
      }
    }
  }
  expect_bug_fails_alone(c, buggy,
                         {"call: layout hnd, storage fp8_e4m3, block_size 32 (2 blocks), kv_heads 4, head_dim 128, "
                       "k_scale [96, 128, 112.5, 140] v_scale [150, 160, 170, 180.5] per head, multiply (stored = x * "
                       "scale), padding skip_token, slots [31, 32, 33, 63, 0]",
                       "first wrong: k_cache (token 0, head 0, feature 0) -> (block 0, offset 31): got"});
}

// pytorch/ao #1912: eager torch.to(float8_e4m3fn) made values past 448 NaN instead of saturating.
TEST_F(RopeCacheCheck, Fp8NotSaturatedFailsWithTheNaN) {
  const ManifestCase& c = case_named("nhd_fp8_e4m3_bs16_saturating_divide");
  PortOutputs buggy = ideal(c);
  // What rounds past 448 (|y| >= 464, the midpoint to the next binade's 480) became NaN there;
  // values from 432 to 464 round to 448 either way.
  const auto slots = read_npy(c.file("slots").path).as_int64();
  int made_nan = 0;
  for (const std::string which : {"k", "v"}) {
    const auto rows = read_npy(c.file(which + "_rows_expected").path).as_float64();
    std::vector<std::byte>& cache = which == "k" ? buggy.k_cache : buggy.v_cache;
    for (std::size_t t = 0; t < slots.size(); ++t) {
      for (std::int64_t h = 0; h < c.cache.kv_heads && slots[t] >= 0; ++h) {
        for (std::int64_t f = 0; f < c.cache.head_dim; ++f) {
          const double y = rows[(t * static_cast<std::size_t>(c.cache.kv_heads) + static_cast<std::size_t>(h)) *
                                    static_cast<std::size_t>(c.cache.head_dim) + static_cast<std::size_t>(f)];
          if (std::abs(y) < 464) continue;
          cache[static_cast<std::size_t>(cache_index(c.cache, slots[t], h, f))] |= std::byte{0x7F};  // e4m3's NaN
          ++made_nan;
        }
      }
    }
  }
  ASSERT_GT(made_nan, 0) << "the case must saturate somewhere";
  expect_bug_fails_alone(c, buggy,
                         {"storage fp8_e4m3", "k_scale [0.5] v_scale [0.5] per tensor, divide", "slots [3, 17, -1, 18]",
                       "first wrong: k_cache (token 0, head 0, feature ", "nan, want", "saturated: exactly -448)"});
}

// The scale's direction flipped: a kernel that divides where the cache declares multiply
// (TensorRT-LLM PR #16916's class: the scale not applied as declared).
TEST_F(RopeCacheCheck, ScaleDirectionFlippedFailsNamingTheDirection) {
  const ManifestCase& c = case_named("nhd_fp8_e4m3_bs16_per_tensor_multiply_flashinfer");
  ASSERT_EQ(c.cache.scale_direction, ScaleDirection::multiply);
  expect_bug_fails_alone(c, run_port(two_pass(), c, [](RopeCacheCall& call, std::vector<std::int64_t>&) {
          call.cache.scale_direction = ScaleDirection::divide;
        }),
                         {"k_scale [120.5] v_scale [150.25] per tensor, multiply (stored = x * scale)",
                       "block_size 16 (3 blocks)", "slots [44, 45, 46, 47, 0, 1]",
                       "first wrong: k_cache (token 0, head 0, feature 0) -> (block 2, offset 12): got"});
}

// One byte of an element no slot addresses changed (the whole cache is compared, as vLLM's
// test_cache does): bit for bit, however small the change.
TEST_F(RopeCacheCheck, OneUnaddressedByteChangedFails) {
  const ManifestCase& c = case_named("hnd_bf16_bs16_d128");
  PortOutputs buggy = ideal(c);
  // Slot 31 (block 1, offset 15) is written by no token; its head 1, feature 7 in v, low byte.
  const auto at = static_cast<std::size_t>(cache_index(c.cache, 31, 1, 7)) * 2;
  buggy.v_cache[at] ^= std::byte{0x01};
  expect_bug_fails_alone(c, buggy,
                         {"call: layout hnd, storage bf16, block_size 16 (2 blocks), kv_heads 2, head_dim 128, "
                          "no scale",
                       "first wrong: v_cache (block 1, offset 15, head 1, feature 7) = slot 31, addressed by no valid "
                       "slot, must keep its bits"});
}

// DeepSeek's MLA row with k_pe written unrotated: token 0 sits at position 0, where the rotation
// is the identity, so the first wrong element is token 1's first k_pe feature, named as such.
TEST_F(RopeCacheCheck, MlaKPeUnrotatedFailsNamingTheRowsPart) {
  const ManifestCase& c = case_named("mla_bf16_bs16_deepseek_v3");
  PortOutputs buggy = ideal(c);
  const auto k = read_npy(c.file("k").path).as_float32();
  const auto slots = read_npy(c.file("slots").path).as_int64();
  for (std::size_t t = 0; t < slots.size(); ++t) {
    if (slots[t] < 0) continue;
    for (std::int64_t f = 0; f < c.cache.head_dim; ++f) {
      write_cache_element(c.cache.storage, buggy.k_cache, cache_index(c.cache, slots[t], 0, c.cache.latent_dim + f),
                          k[t * static_cast<std::size_t>(c.cache.head_dim) + static_cast<std::size_t>(f)]);
    }
  }
  expect_bug_fails_alone(c, buggy,
                         {"call: layout mla, storage bf16, block_size 16 (3 blocks), latent_dim 512 + head_dim 64",
                       "first wrong: k_cache (token 1, k_pe feature 0) -> (block 1, offset 0): got"});
}

// A skip_token kernel that rotates a padding token's q anyway: the padding rule violated.
TEST_F(RopeCacheCheck, APaddingTokensQRotatedUnderSkipTokenFails) {
  const ManifestCase& c = case_named("nhd_fp8_e4m3_bs16_per_tensor_divide_vllm");
  ASSERT_EQ(c.cache.padding, PaddingRule::skip_token);
  PortOutputs buggy = ideal(c);
  buggy.q[static_cast<std::size_t>(c.q_heads * c.rope_spec.head_dim) + 3] += 0.25f;  // token 1 is padding
  expect_bug_fails_alone(c, buggy,
                         {"padding skip_token, slots [5, -1, 20, 21, 3]",
                       "first wrong: q token 1 head 0 feature 3 (slot -1, padding: skip_token leaves its q as it came)"});
}

TEST_F(RopeCacheCheck, OutputsOfAnotherDtypeOrShapeExit2NamingTheFile) {
  const ScratchDir out("ropecheck_rope_cache_bad");
  write_all_ideal(out.path());
  const ManifestCase& c = case_named("nhd_fp8_e4m3_bs16_per_tensor_divide_vllm");
  const fs::path k_out = out / c.name / "k_cache_out.npy";
  const std::vector<float> widened(static_cast<std::size_t>(cache_elements(c.cache)), 1.0f);
  write_npy(k_out, widened, cache_shape(c.cache));
  test::CliRun run = check(out.path());
  EXPECT_EQ(run.code, kExitUsage) << run.out << run.err;
  EXPECT_TRUE(test::contains(run.err, k_out.string())) << run.err;
  EXPECT_TRUE(test::contains(run.err, "dtype '<f4' shape (3, 16, 2, 128), expected '|u1' (3, 16, 2, 128) (as "
                                "k_cache_initial.npy)")) << run.err;
  write_all_ideal(out.path());
  fs::remove(out / c.name / "v_cache_out.npy");
  run = check(out.path());
  EXPECT_EQ(run.code, kExitFailed) << run.out << run.err;
  EXPECT_TRUE(test::contains(run.out, "not found: " + c.name + "/v_cache_out.npy")) << run.out;
}

// The RoPE cases keep their own kind: a default `check` judges them alone and lists no fused case.
TEST_F(RopeCacheCheck, TheDefaultKindStillJudgesTheRopeCasesAlone) {
  const ScratchDir out("ropecheck_rope_cache_kinds");
  write_all_ideal(out.path());
  const test::CliRun run =
      test::run_in_process({"check", "--vectors", vectors().string(), "--outputs", out.str()});
  EXPECT_EQ(run.code, kExitUsage) << run.out << run.err;  // no rope case's output at all
  EXPECT_TRUE(test::contains(run.err, "no output of any rope case")) << run.err;
}

}  // namespace
}  // namespace ropecheck
