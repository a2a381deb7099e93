// The call forms' golden files and manifest: the case table covers what issue 52 asks (Qwen3's
// plain weight on a packed qkv, Gemma's 1 + w at head_dim 256, GLM's partial rotary with eps
// 1e-5, fp32/bf16/fp16, both norm precisions; the cos/sin cache with a scaling in it, a position
// at its last row, partial rotary, no k; strides that are not head_dim, q's and k's unequal,
// MLA's rope parts); the manifest's call reads back as written; the files agree with the call
// (untouched elements keep their bits, rows rounded once, the cache the spec's) and with a hand
// computation of the norm; an older manifest still reads, and a call form case in one, or a
// malformed call, is refused.
//   cmake --build build --target vectors_tests && build/tests/vectors_tests --gtest_filter='RopeFormVectors*'
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/exit_codes.h"
#include "core/rope_form.h"
#include "core/tolerance.h"
#include "tests/support/in_process_cli.h"
#include "tests/support/test_process.h"
#include "vectors/golden_cases.h"
#include "vectors/manifest.h"
#include "vectors/manifest_reader.h"
#include "vectors/npy.h"
#include "vectors/rope_form_golden_cases.h"
#include "vectors/round_once.h"
#include "vectors/vectors.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using test::ScratchDir;

class RopeFormVectors : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir("ropecheck_rope_form_vectors");
    std::ostringstream out;
    ASSERT_EQ(run_vectors(VectorsOptions{vectors()}, out), kExitOk);
    manifest_ = new Manifest(read_manifest(vectors()));
    json_ = new Json(Json::parse(test::slurp(vectors() / "manifest.json")));
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete manifest_;
    delete json_;
  }
  static fs::path vectors() { return *dir_ / "golden"; }
  static const ManifestCase& read_back(const std::string& name) {
    for (const auto& c : manifest_->cases) {
      if (c.name == name) return c;
    }
    throw std::runtime_error("no case " + name);
  }
  static NpyArray form_file(const GoldenRopeFormCase& c, const std::string& key) {
    return read_npy(read_back(c.name).file(key).path);
  }

  static ScratchDir* dir_;
  static Manifest* manifest_;
  static Json* json_;
};

ScratchDir* RopeFormVectors::dir_ = nullptr;
Manifest* RopeFormVectors::manifest_ = nullptr;
Json* RopeFormVectors::json_ = nullptr;

bool any_form_case(const std::function<bool(const GoldenRopeFormCase&)>& pred) {
  const auto cases = golden_rope_form_cases();
  return std::any_of(cases.begin(), cases.end(), pred);
}

bool has_region(const FormCall& call, const std::string& name) {
  return std::any_of(call.regions.begin(), call.regions.end(), [&](const FormRegion& r) { return r.name == name; });
}

TEST(RopeFormCases, TheTableCoversIssue52) {
  const auto normed = [](const GoldenRopeFormCase& c) { return c.call.has_norm; };
  EXPECT_TRUE(any_form_case([&](const auto& c) {  // Qwen3: plain, 128, eps 1e-6, packed qkv with v
    return normed(c) && c.call.norm.weight == NormWeight::plain && c.spec.head_dim == 128 && c.call.norm.eps == 1e-6 &&
           c.spec.layout == Layout::half_split && has_region(c.call, "v");
  }));
  EXPECT_TRUE(any_form_case([&](const auto& c) {  // Gemma
    return normed(c) && c.call.norm.weight == NormWeight::one_plus && c.spec.head_dim == 256 && c.call.norm.eps == 1e-6;
  }));
  EXPECT_TRUE(any_form_case([&](const auto& c) {  // GLM: partial rotary, eps 1e-5
    return normed(c) && c.spec.rotary_dim * 2 == c.spec.head_dim && c.call.norm.eps == 1e-5;
  }));
  for (const StorageType s : {StorageType::fp32, StorageType::bf16, StorageType::fp16}) {
    EXPECT_TRUE(any_form_case([&](const auto& c) { return normed(c) && c.call.storage == s; })) << to_string(s);
  }
  for (const NormPrecision p : {NormPrecision::fp32, NormPrecision::storage}) {
    EXPECT_TRUE(any_form_case([&](const auto& c) { return normed(c) && c.call.norm.precision == p; })) << to_string(p);
  }
  const auto cached = [](const GoldenRopeFormCase& c) { return c.call.angles == AngleSource::cos_sin_cache; };
  EXPECT_TRUE(any_form_case([&](const auto& c) {
    return cached(c) && std::find(c.positions.begin(), c.positions.end(), c.call.cache_rows - 1) != c.positions.end();
  }));
  EXPECT_TRUE(any_form_case([&](const auto& c) { return cached(c) && c.spec.rotary_dim < c.spec.head_dim; }));
  EXPECT_TRUE(any_form_case([&](const auto& c) {
    return cached(c) && (c.spec.scaling.kind == ScalingKind::yarn || c.spec.scaling.kind == ScalingKind::llama3);
  }));
  EXPECT_TRUE(any_form_case([](const auto& c) { return c.call.k.heads == 0; }));
  EXPECT_TRUE(any_form_case([](const auto& c) {  // strides not head_dim, q's and k's unequal, both multi-head
    return c.call.q.head_stride != c.spec.head_dim && c.call.k.heads > 1 && c.call.k.head_stride != c.spec.head_dim &&
           c.call.k.head_stride != c.call.q.head_stride;
  }));
  EXPECT_TRUE(any_form_case([](const auto& c) {  // MLA: q_pe at 128 of 192, k_pe at 512 of 576, interleaved
    return c.call.q.offset == 128 && c.call.q.head_stride == 192 && c.call.k.token_stride == 576 &&
           c.spec.layout == Layout::interleaved && has_region(c.call, "q_nope");
  }));
}

TEST_F(RopeFormVectors, TheManifestStatesEachCallAsWritten) {
  EXPECT_EQ(manifest_->format, kVectorsFormat);
  EXPECT_EQ(std::string(kVectorsFormat), "ropecheck.vectors/6");
  for (const GoldenRopeFormCase& g : golden_rope_form_cases()) {
    SCOPED_TRACE(g.name);
    const ManifestCase& c = read_back(g.name);
    EXPECT_EQ(c.kind, "rope_form");
    EXPECT_EQ(c.dtype, g.call.storage);
    EXPECT_EQ(c.tokens, static_cast<std::int64_t>(g.positions.size()));
    EXPECT_EQ(c.rope_spec.head_dim, g.spec.head_dim);
    EXPECT_EQ(c.rope_spec.scaling, g.spec.scaling);
    const FormCall& f = c.form;
    for (const auto& [got, want] : {std::pair{f.q, g.call.q}, std::pair{f.k, g.call.k}}) {
      EXPECT_EQ(got.heads, want.heads);
      EXPECT_EQ(got.offset, want.offset);
      EXPECT_EQ(got.token_stride, want.token_stride);
      EXPECT_EQ(got.head_stride, want.head_stride);
    }
    EXPECT_EQ(f.elements, g.call.elements);
    EXPECT_EQ(f.angles, g.call.angles);
    EXPECT_EQ(f.cache_rows, g.call.cache_rows);
    EXPECT_EQ(f.has_norm, g.call.has_norm);
    EXPECT_EQ(f.norm.eps, g.call.norm.eps);
    EXPECT_EQ(f.norm.weight, g.call.norm.weight);
    EXPECT_EQ(f.norm.precision, g.call.norm.precision);
    ASSERT_EQ(f.regions.size(), g.call.regions.size());
    for (std::size_t r = 0; r < f.regions.size(); ++r) EXPECT_EQ(f.regions[r].name, g.call.regions[r].name);
    // The derived numbers, not copies: tolerance.h's.
    EXPECT_EQ(c.form_norm.relative_error,
              g.call.has_norm ? qk_norm_relative_error(g.spec.head_dim, g.call.norm.precision, g.call.storage) : 0.0);
    EXPECT_EQ(c.rope_tolerance.storage, storage_rounding_units(g.call.storage));
  }
}

// The expected buffer: untouched elements the input's bits, each view row's element the float64
// expected value rounded once to the storage; the cache the spec's, [rows][rotary_dim].
TEST_F(RopeFormVectors, TheFilesAgreeWithTheCall) {
  for (const GoldenRopeFormCase& g : golden_rope_form_cases()) {
    SCOPED_TRACE(g.name);
    const StorageType s = g.call.storage;
    const std::vector<std::byte> before = form_file(g, "buffer").data;
    const std::vector<std::byte> after = form_file(g, "buffer_expected_" + std::string(to_string(s))).data;
    ASSERT_EQ(before.size(), static_cast<std::size_t>(g.call.elements * element_bytes(s)));
    ASSERT_EQ(after.size(), before.size());
    std::vector<bool> in_view(static_cast<std::size_t>(g.call.elements), false);
    const auto tokens = static_cast<std::int64_t>(g.positions.size());
    const std::int64_t d = g.spec.head_dim;
    for (const bool of_q : {true, false}) {
      const HeadView& view = of_q ? g.call.q : g.call.k;
      if (view.heads == 0) continue;
      const std::string name = of_q ? "q" : "k";
      const auto expected = form_file(g, name + "_expected").as_float64();
      const auto bound = form_file(g, name + "_bound").as_float64();
      ASSERT_EQ(expected.size(), static_cast<std::size_t>(tokens * view.heads * d));
      for (std::int64_t t = 0; t < tokens; ++t) {
        for (std::int64_t h = 0; h < view.heads; ++h) {
          for (std::int64_t f = 0; f < d; ++f) {
            const std::int64_t index = row_start(view, t, h) + f;
            const auto j = static_cast<std::size_t>((t * view.heads + h) * d + f);
            in_view[static_cast<std::size_t>(index)] = true;
            const double y = expected[j];
            const float want = s == StorageType::fp32   ? static_cast<float>(y)
                               : s == StorageType::bf16 ? float_from_bf16(bf16_from_double(y))
                                                        : float_from_fp16(fp16_from_double(y));
            ASSERT_EQ(load_element(s, after, index), want) << name << " " << t << " " << h << " " << f;
            if (f < g.spec.rotary_dim || g.call.has_norm) {
              ASSERT_GT(bound[j], 0.0) << name << " " << t << " " << h << " " << f;
            } else {
              ASSERT_EQ(bound[j], 0.0);  // bit for bit
              ASSERT_EQ(load_element(s, after, index), load_element(s, before, index));
            }
          }
        }
      }
    }
    const auto bytes = static_cast<std::size_t>(element_bytes(s));
    std::size_t untouched = 0;
    for (std::size_t i = 0; i < in_view.size(); ++i) {
      if (in_view[i]) continue;
      ASSERT_EQ(std::memcmp(before.data() + i * bytes, after.data() + i * bytes, bytes), 0) << "element " << i;
      ++untouched;
    }
    EXPECT_GT(untouched, 0u) << "every case has something around its views";
    if (g.call.angles == AngleSource::cos_sin_cache) {
      const NpyArray cache = form_file(g, "cos_sin_cache");
      EXPECT_EQ(cache.shape, (std::vector<std::int64_t>{g.call.cache_rows, g.spec.rotary_dim}));
      EXPECT_EQ(cache.as_float32(), build_cos_sin_cache(g.spec, g.call.cache_rows));
    }
  }
}

// The norm recomputed from buffer.npy and the weight files as the manifest's formula says, in
// long double: the declared eps and weight convention reached the files. At position 0 the
// rotation is the identity (no scaling on these cases): the expected rows are the normalized ones.
TEST_F(RopeFormVectors, TheNormalizedRowsAreTheFormulasOnTheFiles) {
  int checked_position_zero = 0;
  for (const GoldenRopeFormCase& g : golden_rope_form_cases()) {
    if (!g.call.has_norm) continue;
    SCOPED_TRACE(g.name);
    const std::vector<std::byte> buffer = form_file(g, "buffer").data;
    const std::int64_t d = g.spec.head_dim;
    for (const bool of_q : {true, false}) {
      const HeadView& view = of_q ? g.call.q : g.call.k;
      const std::string name = of_q ? "q" : "k";
      const auto weight = form_file(g, name + "_weight").as_float32();
      const auto normalized = form_file(g, name + "_normalized").as_float64();
      const auto expected = form_file(g, name + "_expected").as_float64();
      for (std::size_t t = 0; t < g.positions.size(); ++t) {
        for (std::int64_t h = 0; h < view.heads; ++h) {
          const std::int64_t start = row_start(view, static_cast<std::int64_t>(t), h);
          long double squares = 0;
          for (std::int64_t f = 0; f < d; ++f) {
            const long double x = load_element(g.call.storage, buffer, start + f);
            squares += x * x;
          }
          const long double r = 1.0L / std::sqrt(squares / d + static_cast<long double>(g.call.norm.eps));
          for (std::int64_t f = 0; f < d; ++f) {
            const long double w = g.call.norm.weight == NormWeight::one_plus ? 1.0L + weight[static_cast<std::size_t>(f)]
                                                                             : weight[static_cast<std::size_t>(f)];
            const double want = static_cast<double>(load_element(g.call.storage, buffer, start + f) * r * w);
            const auto j = (t * static_cast<std::size_t>(view.heads) + static_cast<std::size_t>(h)) *
                               static_cast<std::size_t>(d) + static_cast<std::size_t>(f);
            ASSERT_NEAR(normalized[j], want, 1e-15 * std::abs(want) + 1e-300) << name << " " << t << " " << h << " " << f;
            if (g.positions[t] == 0 || f >= g.spec.rotary_dim) {
              ASSERT_NEAR(expected[j], normalized[j], 1e-15 * std::abs(want) + 1e-300);
              checked_position_zero += g.positions[t] == 0 ? 1 : 0;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked_position_zero, 0);
}

// A format 5 manifest (before the call forms) reads; a rope_form case in one is refused.
TEST_F(RopeFormVectors, OlderManifestsStillReadAndRefuseFormCases) {
  const ScratchDir scratch("ropecheck_rope_form_v5");
  const fs::path v5 = scratch / "golden_v5";  // the manifest alone: read_manifest opens no .npy
  fs::create_directories(v5);
  Json json = *json_;
  json["format"] = kVectorsFormatV5;
  Json without = Json::array();
  for (const Json& c : json["cases"]) {
    if (c["kind"] != "rope_form") without.push_back(c);
  }
  Json edited = json;
  edited["cases"] = without;
  std::ofstream(v5 / "manifest.json") << edited.dump(2);
  const Manifest read = read_manifest(v5);
  EXPECT_EQ(read.format, kVectorsFormatV5);
  EXPECT_EQ(read.cases.size(), without.size());

  std::ofstream(v5 / "manifest.json") << json.dump(2);
  try {
    read_manifest(v5);
    ADD_FAILURE() << "a rope_form case in a format 5 manifest was read";
  } catch (const InvalidInput& e) {
    EXPECT_TRUE(test::contains(e.what(), "kind rope_form came with format ropecheck.vectors/6, not "
                                         "ropecheck.vectors/5")) << e.what();
  }
}

// A hand-edited call that would send the judge past the buffer, or that no call could be, is
// refused naming the case and what is wrong; `check` exits 2 on it.
TEST_F(RopeFormVectors, MalformedCallsAreRefused) {
  const ScratchDir scratch("ropecheck_rope_form_malformed");
  const fs::path dir = scratch / "golden";  // the manifest alone: it is refused before any .npy
  fs::create_directories(dir);
  const std::string name = "strided_padded_heads_qk_norm_fp32";
  const auto expect_refused = [&](const std::function<void(Json&)>& change, const std::string& part) {
    Json json = *json_;
    for (Json& c : json["cases"]) {
      if (c["name"] == name) change(c);
    }
    std::ofstream(dir / "manifest.json", std::ios::trunc) << json.dump(2);
    try {
      read_manifest(dir);
      ADD_FAILURE() << "accepted; expected '" << part << "'";
    } catch (const InvalidInput& e) {
      EXPECT_TRUE(test::contains(e.what(), "case " + name)) << e.what();
      EXPECT_TRUE(test::contains(e.what(), part)) << "'" << part << "' not in: " << e.what();
    }
  };
  expect_refused([](Json& c) { c["call"]["k"]["offset"] = 64; }, "q and k overlap");
  expect_refused([](Json& c) { c["call"]["k"]["head_stride"] = 100; }, "k: heads overlap, head stride 100 < head_dim 128");
  expect_refused([](Json& c) { c["call"]["buffer_elements"] = 2000; }, "reach past the buffer's 2000 elements");
  expect_refused([](Json& c) { c["call"]["qk_norm"]["eps"] = 0.0; }, "eps 0 must be finite and > 0");
  expect_refused([](Json& c) { c["call"]["qk_norm"]["weight"] = "two_plus"; },
                 "unknown qk_norm weight 'two_plus' (plain, one_plus)");
  expect_refused([](Json& c) { c["call"]["qk_norm"].erase("precision"); }, "precision");
  expect_refused([](Json& c) { c["call"]["angles"] = "table"; }, "unknown angles 'table' (spec, cos_sin_cache)");
  expect_refused([](Json& c) { c["call"]["storage"] = "bf16"; }, "call.storage bf16 is not the case's dtype fp32");
  expect_refused([](Json& c) { c["tolerance"]["qk_norm"]["relative_error"] = -1.0; }, "relative_error");
  expect_refused(
      [](Json& c) {
        c["call"]["regions"] = Json::array(
            {{{"name", "pad"}, {"heads", 1}, {"offset", 2600}, {"token_stride", 640}, {"head_stride", 0}, {"width", 8}}});
      },
      "call region pad");
  const test::CliRun run = test::run_in_process(
      {"check", "--vectors", dir.string(), "--outputs", scratch.str(), "--kind", "rope_form"});
  EXPECT_EQ(run.code, kExitUsage) << run.out << run.err;
  EXPECT_TRUE(test::contains(run.err, "case " + name)) << run.err;
}

}  // namespace
}  // namespace ropecheck
