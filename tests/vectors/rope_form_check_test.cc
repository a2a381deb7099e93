// `ropecheck check --kind rope_form` on the call forms' golden cases, as a porter of a fused
// QK-norm + RoPE kernel runs it: the oracle's buffers rounded once pass; the readable reference
// (form_reference/scalar, and its storage-precision twin for the unfused cases) passes within the
// manifest's bounds; a port with each bug class of issue 52 (k read with q's head stride, the
// strides ignored, eps dropped, 1 + w the wrong way, cos and sin from one index, a v element
// touched) fails its case, and only it, with the call named (strides, offsets, eps, weight
// convention, precision, angle source) and the first wrong element as (token, head, feature) of
// q or k or as the region it hit; bad outputs exit 2 naming the file.
//   cmake --build build --target vectors_tests && build/tests/vectors_tests --gtest_filter='RopeFormCheck*'
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/exit_codes.h"
#include "core/rope_form.h"
#include "impls/fused/rope_form_reference.h"
#include "impls/registry.h"
#include "tests/support/in_process_cli.h"
#include "tests/support/test_process.h"
#include "vectors/check.h"
#include "vectors/manifest_reader.h"
#include "vectors/npy.h"
#include "vectors/rope_form_golden_cases.h"
#include "vectors/vectors.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;

// The reference with a storage-precision norm: an unfused chain in the model's dtype (the
// reference's own hook rounds as that precision says; only its capabilities declare fp32).
class StoragePrecisionForm : public RopeFormReference {
 public:
  RopeFormCapabilities capabilities() const override {
    RopeFormCapabilities caps = RopeFormReference::capabilities();
    caps.norm_precision = NormPrecision::storage;
    return caps;
  }
};

// Each bug class of issue 52 as one overridden hook of the reference, nothing else changed.
class KWithQsHeadStride : public RopeFormReference {
 protected:
  HeadView k_view(const RopeFormCall& call) const override {
    return {call.k.heads, call.k.offset, call.k.token_stride, call.q.head_stride};
  }
};
class StridesIgnored : public RopeFormReference {
 protected:
  HeadView as_read(const HeadView& view, std::int64_t head_dim) const override {
    return view.heads == 0 ? view : flat_view(view.heads, head_dim, view.offset);
  }
};
class EpsDropped : public RopeFormReference {
 protected:
  float inverse_rms(float sum_of_squares, int n, float eps) const override {
    (void)eps;
    return 1.0f / std::sqrt(sum_of_squares / static_cast<float>(n));
  }
};
class OnePlusTheWrongWay : public RopeFormReference {
 protected:
  float weight_factor(float w, NormWeight declared) const override {
    return declared == NormWeight::one_plus ? w : 1.0f + w;
  }
};
class CosSinSameIndex : public RopeFormReference {
 protected:
  std::pair<float, float> cached_cos_sin(const float* row, int i, int pairs) const override {
    (void)pairs;
    return {row[i], row[i]};
  }
};

class RopeFormCheck : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir("ropecheck_rope_form_check");
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
  static std::vector<const ManifestCase*> form_cases() {
    std::vector<const ManifestCase*> cases;
    for (const auto& c : manifest_->cases) {
      if (c.kind == "rope_form") cases.push_back(&c);
    }
    return cases;
  }

  // The ideal port: the oracle's buffer rounded once.
  static std::vector<std::byte> ideal(const ManifestCase& c) {
    return read_npy(c.file("buffer_expected_" + std::string(to_string(c.form.storage))).path).data;
  }

  // What `impl` leaves in the case's buffer, from the case's files alone, as a porter calls it.
  static std::vector<std::byte> run_port(const RopeFormImpl& impl, const ManifestCase& c) {
    std::vector<std::byte> buffer = read_npy(c.file("buffer").path).data;
    const auto positions = read_npy(c.file("positions").path).as_int64();
    std::vector<float> cache, q_weight, k_weight;
    RopeFormCall call;
    call.spec = c.rope_spec;
    call.storage = c.form.storage;
    call.buffer = buffer;
    call.tokens = c.tokens;
    call.q = c.form.q;
    call.k = c.form.k;
    call.positions = positions;
    call.angles = c.form.angles;
    if (c.form.angles == AngleSource::cos_sin_cache) {
      cache = read_npy(c.file("cos_sin_cache").path).as_float32();
      call.cos_sin_cache = cache;
      call.cache_rows = c.form.cache_rows;
    }
    if (c.form.has_norm) {
      call.has_norm = true;
      call.norm = c.form.norm;
      q_weight = read_npy(c.file("q_weight").path).as_float32();
      call.q_weight = q_weight;
      if (c.form.k.heads > 0) {
        k_weight = read_npy(c.file("k_weight").path).as_float32();
        call.k_weight = k_weight;
      }
    }
    impl.apply(call);
    return buffer;
  }

  static void write(const fs::path& out, const ManifestCase& c, const std::vector<std::byte>& buffer) {
    fs::create_directories(out / c.name);
    const ManifestFile& like = c.file("buffer");
    write_npy(out / c.name / "buffer_out.npy", like.descr, like.shape, buffer);
  }
  static void write_all_ideal(const fs::path& out) {
    for (const ManifestCase* c : form_cases()) write(out, *c, ideal(*c));
  }
  static test::CliRun check(const fs::path& out) {
    return test::run_in_process(
        {"check", "--vectors", vectors().string(), "--outputs", out.string(), "--kind", "rope_form"});
  }

  // Every case's ideal buffer but `c`'s, which is `buggy`: the check fails that case alone, its
  // output saying each of `mentions`.
  static void expect_bug_fails_alone(const ManifestCase& c, const std::vector<std::byte>& buggy,
                                     const std::vector<std::string>& mentions) {
    const ScratchDir out("ropecheck_rope_form_bug");
    write_all_ideal(out.path());
    write(out.path(), c, buggy);
    const test::CliRun run = check(out.path());
    EXPECT_EQ(run.code, kExitFailed) << run.out << run.err;
    EXPECT_TRUE(test::contains(run.out, "1 failed")) << run.out;
    EXPECT_TRUE(test::contains(run.out, "FAIL    " + c.name + " ")) << run.out;
    for (const auto& part : mentions) {
      EXPECT_TRUE(test::contains(run.out, part)) << "'" << part << "' not in:\n" << run.out;
    }
  }

  static ScratchDir* dir_;
  static Manifest* manifest_;
};

ScratchDir* RopeFormCheck::dir_ = nullptr;
Manifest* RopeFormCheck::manifest_ = nullptr;

TEST_F(RopeFormCheck, TheOraclesBuffersRoundedOncePassEveryCase) {
  const ScratchDir out("ropecheck_rope_form_ideal");
  write_all_ideal(out.path());
  const test::CliRun run = check(out.path());
  EXPECT_EQ(run.code, kExitOk) << run.out << run.err;
  const auto count = golden_rope_form_cases().size();
  EXPECT_TRUE(test::contains(run.out, fmt::format("check: {} rope_form cases, {} passed, 0 failed, 0 missing", count, count)))
      << run.out;
}

// A real port: the readable reference, fp32 arithmetic throughout (its fp32 sum of squares, its
// fp32 rotation, the storage's one rounding), is within every case's bound; the unfused cases
// through its storage-precision twin. The worst ratio is recorded.
TEST_F(RopeFormCheck, TheReferenceImplementationMeetsTheBounds) {
  const RopeFormImpl* reference = find_rope_form("form_reference/scalar");
  ASSERT_NE(reference, nullptr);
  const StoragePrecisionForm unfused;
  const ScratchDir out("ropecheck_rope_form_reference");
  for (const ManifestCase* c : form_cases()) {
    const bool storage_precision = c->form.has_norm && c->form.norm.precision == NormPrecision::storage;
    write(out.path(), *c, run_port(storage_precision ? unfused : *reference, *c));
  }
  CheckOptions options;
  options.vectors_dir = vectors();
  options.outputs_dir = out.path();
  options.kind = "rope_form";
  const CheckReport report = check_outputs(options);
  ASSERT_EQ(report.cases.size(), golden_rope_form_cases().size());
  for (const CaseCheck& row : report.cases) {
    EXPECT_EQ(row.verdict, CheckVerdict::pass) << row.name << ": " << row.first_wrong << "\n  worst " << row.worst.where;
    EXPECT_GT(row.worst.ratio, 0.0) << row.name << ": a real port's error is not nothing";
    RecordProperty("form_reference/" + row.name, std::to_string(row.worst.ratio));
  }
  EXPECT_EQ(report.exit_code(), kExitOk);
}

// k's rows read and written with q's head stride (160 for 136): k's head 1 lands 24 elements late.
TEST_F(RopeFormCheck, KWithQsHeadStrideFailsNamingKsHead) {
  const ManifestCase& c = case_named("strided_padded_heads_qk_norm_fp32");
  expect_bug_fails_alone(c, run_port(KWithQsHeadStride(), c),
                         {"call: storage fp32, 2560 elements; q heads 2 at offset 0, token stride 640, head stride 160; "
                          "k heads 2 at offset 320, token stride 640, head stride 136; angles from the spec; qk_norm "
                          "eps=1e-06 weight=plain precision=fp32",
                          "first wrong: k (token 0, head 1, feature 0: pair 0, position 2"});
}

// MLA's q_pe read as a flat [tokens, heads * 64] at offset 128: heads read from and written over
// the nope parts. Token 0 sits at position 0 (the identity without a norm), so its rows pass
// wherever they were read; the first wrong element is its head 2 at element 512, where the flat
// view puts token 1's third head, rotated by position 1.
TEST_F(RopeFormCheck, StridesIgnoredFailsNamingTheViews) {
  const ManifestCase& c = case_named("mla_deepseek_v3_q_pe_k_pe_cos_sin_cache_bf16");
  expect_bug_fails_alone(c, run_port(StridesIgnored(), c),
                         {"q heads 4 at offset 128, token stride 768, head stride 192; k heads 1 at offset 3584, "
                          "token stride 576, head stride 64; angles from the cos_sin_cache (128 rows); no qk_norm",
                          "first wrong: q (token 0, head 2, feature 0: pair 0, position 0, theta 1) at element 512",
                          "worst: q_nope (token 0, head 2, feature 0) at element 384, not the call's to touch"});
}

// 1 / sqrt(mean(x^2)) without eps, on activations where eps is 5% of the mean square.
TEST_F(RopeFormCheck, EpsDroppedFailsNamingTheNorm) {
  const ManifestCase& c = case_named("qk_norm_qwen3_d128_plain_bf16_small_activations");
  expect_bug_fails_alone(c, run_port(EpsDropped(), c),
                         {"qk_norm eps=1e-06 weight=plain precision=fp32", "first wrong: q (token 0, head 0, feature "});
}

// Gemma's weight taken as w where the checkpoint holds w for 1 + w.
TEST_F(RopeFormCheck, OnePlusWeightTheWrongWayFailsNamingTheConvention) {
  const ManifestCase& c = case_named("qk_norm_gemma3_d256_one_plus_bf16");
  expect_bug_fails_alone(c, run_port(OnePlusTheWrongWay(), c),
                         {"qk_norm eps=1e-06 weight=one_plus precision=fp32",
                          "first wrong: q (token 0, head 0, feature 0: pair 0, position 0"});
}

// sin read at cos's index of the [cos | sin] row: sin = cos.
TEST_F(RopeFormCheck, CosAndSinFromOneIndexFailsNamingTheCache) {
  const ManifestCase& c = case_named("cos_sin_cache_llama31_d128_fp32_last_row");
  expect_bug_fails_alone(c, run_port(CosSinSameIndex(), c),
                         {"angles from the cos_sin_cache (128 rows); no qk_norm",
                          "positions [0, 100, 126, 127]",
                          "first wrong: q (token 0, head 0, feature 0: pair 0, position 0"});
}

// One element of v, between token 2's k and token 3's q, changed by the call.
TEST_F(RopeFormCheck, AVElementTouchedFailsNamingV) {
  const ManifestCase& c = case_named("qk_norm_qwen3_d128_plain_fp32_packed_qkv");
  std::vector<std::byte> buggy = ideal(c);
  const std::int64_t index = 2 * 1024 + 768 + 128 + 3;  // token 2, v head 1, feature 3
  store_element(c.form.storage, buggy, index, load_element(c.form.storage, buggy, index) * 0.5f);
  expect_bug_fails_alone(c, buggy,
                         {"q heads 4 at offset 0, token stride 1024, head stride 128; k heads 2 at offset 512, "
                          "token stride 1024, head stride 128",
                          fmt::format("first wrong: v (token 2, head 1, feature 3) at element {}, not the call's to "
                                      "touch: got ",
                                      index)});
}

// A rotation that writes past rotary_dim's pairs into the nope part of MLA's q head.
TEST_F(RopeFormCheck, ANopeElementTouchedFailsNamingTheNopePart) {
  const ManifestCase& c = case_named("mla_deepseek_v3_q_pe_k_pe_cos_sin_cache_bf16");
  std::vector<std::byte> buggy = ideal(c);
  store_element(c.form.storage, buggy, 768 + 192 + 127, 0.0f);  // token 1, head 1, nope feature 127
  expect_bug_fails_alone(c, buggy, {"first wrong: q_nope (token 1, head 1, feature 127) at element 1087"});
}

TEST_F(RopeFormCheck, OutputsOfAnotherDtypeOrSizeExit2NamingTheFile) {
  const ScratchDir out("ropecheck_rope_form_bad");
  write_all_ideal(out.path());
  const ManifestCase& c = case_named("qk_norm_gemma3_d256_one_plus_bf16");
  const fs::path buffer_out = out / c.name / "buffer_out.npy";
  const std::vector<float> widened(static_cast<std::size_t>(c.form.elements), 1.0f);
  write_npy(buffer_out, widened, std::vector<std::int64_t>{c.form.elements});
  test::CliRun run = check(out.path());
  EXPECT_EQ(run.code, kExitUsage) << run.out << run.err;
  EXPECT_TRUE(test::contains(run.err, buffer_out.string())) << run.err;
  EXPECT_TRUE(test::contains(run.err, "dtype '<f4' shape (4096), expected '<u2' (4096) (as buffer.npy)")) << run.err;

  write_all_ideal(out.path());
  fs::remove(buffer_out);
  run = check(out.path());
  EXPECT_EQ(run.code, kExitFailed) << run.out << run.err;
  EXPECT_TRUE(test::contains(run.out, "not found: " + c.name + "/buffer_out.npy")) << run.out;

  const ScratchDir empty("ropecheck_rope_form_empty");
  run = check(empty.path());
  EXPECT_EQ(run.code, kExitUsage) << run.out << run.err;
  EXPECT_TRUE(test::contains(run.err, "no output of any rope_form case")) << run.err;
}

// A vectors directory whose buffer was cut short is bad input: exit 2 naming the file.
TEST_F(RopeFormCheck, ATruncatedBufferInTheVectorsExits2) {
  const ScratchDir scratch("ropecheck_rope_form_truncated");
  const fs::path copy = scratch / "golden";  // the manifest and the call form cases `check` reads
  fs::create_directories(copy);
  fs::copy_file(vectors() / "manifest.json", copy / "manifest.json");
  for (const ManifestCase* c : form_cases()) fs::copy(vectors() / c->name, copy / c->name);
  const ManifestCase& c = case_named("cos_sin_cache_d64_fp16_q_only");
  const fs::path buffer = copy / c.name / "buffer.npy";
  const NpyArray whole = read_npy(buffer);
  std::vector<std::byte> half(whole.data.begin(), whole.data.begin() + static_cast<std::ptrdiff_t>(whole.data.size() / 2));
  write_npy(buffer, whole.descr, std::vector<std::int64_t>{whole.shape[0] / 2}, half);
  const ScratchDir out("ropecheck_rope_form_truncated_out");
  write_all_ideal(out.path());
  const test::CliRun run = test::run_in_process(
      {"check", "--vectors", copy.string(), "--outputs", out.str(), "--kind", "rope_form"});
  EXPECT_EQ(run.code, kExitUsage) << run.out << run.err;
  EXPECT_TRUE(test::contains(run.err, buffer.string())) << run.err;
}

}  // namespace
}  // namespace ropecheck
