// The fused call's golden files and manifest: the case table covers what issue 56 asks (every
// layout and storage, FP8 scales per tensor and per head in both directions, both padding rules,
// MLA's 512 + 64, block sizes 16 to 128, slots across blocks, repeated blocks, gaps, out of order,
// -1, saturating values, GQA); the manifest's cache fields and tolerance read back as written and
// are the derived numbers; the files agree with a hand computation of the slot mapping, the
// scaling and one rounding; an older manifest still reads, and a fused case in one is refused.
//   cmake --build build --target vectors_tests && build/tests/vectors_tests --gtest_filter='RopeCacheVectors*:RoundOnce*'
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/exit_codes.h"
#include "core/fp8.h"
#include "core/kv_cache.h"
#include "core/tolerance.h"
#include "tests/support/in_process_cli.h"
#include "tests/support/test_process.h"
#include "vectors/manifest.h"
#include "vectors/manifest_reader.h"
#include "vectors/npy.h"
#include "vectors/rope_cache_golden_cases.h"
#include "vectors/rope_cache_vectors.h"
#include "vectors/round_once.h"
#include "vectors/vectors.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using test::ScratchDir;

class RopeCacheVectors : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir("ropecheck_rope_cache_vectors");
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
  static const Json& entry(const std::string& name) {
    for (const auto& c : (*json_)["cases"]) {
      if (c["name"] == name) return c;
    }
    throw std::runtime_error("no entry " + name);
  }

  static ScratchDir* dir_;
  static Manifest* manifest_;
  static Json* json_;
};

ScratchDir* RopeCacheVectors::dir_ = nullptr;
Manifest* RopeCacheVectors::manifest_ = nullptr;
Json* RopeCacheVectors::json_ = nullptr;

double largest(CacheStorage storage) {
  return storage == CacheStorage::fp8_e4m3 ? 448.0 : storage == CacheStorage::fp8_e5m2 ? 57344.0 : INFINITY;
}

// What the issue asks the cases to hold, each found in the table (and, for saturation, in the
// oracle's rows): remove a case and the matching expectation fails.
TEST_F(RopeCacheVectors, TheCasesCoverTheIssuesCalls) {
  std::set<std::pair<CacheLayout, CacheStorage>> layouts_storages;
  std::set<std::string> fp8_scales;  // "per_tensor multiply", ...
  std::set<PaddingRule> padding;
  std::set<std::int64_t> block_sizes, head_dims;
  bool across_blocks = false, repeated_block = false, untouched_block = false, out_of_order = false,
       minus_one = false, gqa = false, deepseek_mla = false;
  std::set<CacheStorage> saturated;
  for (const GoldenRopeCacheCase& c : golden_rope_cache_cases()) {
    const KvCacheSpec& k = c.cache;
    layouts_storages.insert({k.layout, k.storage});
    if (is_fp8(k.storage)) {
      const bool per_tensor = k.k_scale.size() == 1 && k.v_scale.size() <= 1;
      fp8_scales.insert(std::string(per_tensor ? "per_tensor " : "per_head ") + std::string(to_string(k.scale_direction)));
    }
    padding.insert(k.padding);
    block_sizes.insert(k.block_size);
    head_dims.insert(c.spec.head_dim);
    gqa = gqa || (c.q_heads == 32 && k.kv_heads == 8);
    deepseek_mla = deepseek_mla || (k.layout == CacheLayout::mla && k.latent_dim == 512 && k.head_dim == 64);
    std::vector<std::int64_t> valid;
    std::set<std::int64_t> blocks;
    for (const std::int64_t slot : c.slots) {
      if (slot < 0) {
        minus_one = true;
        continue;
      }
      repeated_block = repeated_block || !blocks.insert(slot / k.block_size).second;
      if (!valid.empty() && slot == valid.back() + 1 && slot % k.block_size == 0) across_blocks = true;
      valid.push_back(slot);
    }
    untouched_block = untouched_block || static_cast<std::int64_t>(blocks.size()) < k.blocks;
    out_of_order = out_of_order || !std::is_sorted(valid.begin(), valid.end());
    if (is_fp8(k.storage)) {
      for (const std::string which : {"k", "v"}) {
        if (which == "v" && k.layout == CacheLayout::mla) continue;
        for (const double y : read_npy(read_back(c.name).file(which + "_rows_expected").path).as_float64()) {
          if (std::abs(y) > largest(k.storage)) saturated.insert(k.storage);
        }
      }
    }
  }
  for (const CacheLayout layout : {CacheLayout::nhd, CacheLayout::hnd}) {
    for (const CacheStorage storage : {CacheStorage::fp32, CacheStorage::bf16, CacheStorage::fp16,
                                       CacheStorage::fp8_e4m3, CacheStorage::fp8_e5m2}) {
      EXPECT_TRUE(layouts_storages.contains({layout, storage})) << to_string(layout) << " " << to_string(storage);
    }
  }
  EXPECT_TRUE(layouts_storages.contains({CacheLayout::mla, CacheStorage::bf16}));
  EXPECT_TRUE(layouts_storages.contains({CacheLayout::mla, CacheStorage::fp8_e4m3}));
  EXPECT_EQ(fp8_scales, (std::set<std::string>{"per_head divide", "per_head multiply", "per_tensor divide",
                                               "per_tensor multiply"}));
  EXPECT_EQ(padding.size(), 2u);
  EXPECT_EQ(block_sizes, (std::set<std::int64_t>{16, 32, 64, 128}));
  EXPECT_EQ(head_dims, (std::set<std::int64_t>{64, 128}));
  EXPECT_TRUE(across_blocks && repeated_block && untouched_block && out_of_order && minus_one);
  EXPECT_TRUE(gqa) << "LLaMA-3 8B's 32 q over 8 kv heads";
  EXPECT_TRUE(deepseek_mla) << "kv_c 512 then k_pe 64";
  EXPECT_EQ(saturated, (std::set<CacheStorage>{CacheStorage::fp8_e4m3, CacheStorage::fp8_e5m2}));
}

// The manifest states each case's cache as the table has it, read_manifest gives it back, and
// the tolerance numbers are tolerance.h's and the storages' own.
TEST_F(RopeCacheVectors, TheManifestCarriesTheCacheAndItsToleranceAndReadsThemBack) {
  EXPECT_EQ(manifest_->format, kVectorsFormat);
  for (const GoldenRopeCacheCase& c : golden_rope_cache_cases()) {
    SCOPED_TRACE(c.name);
    const ManifestCase& back = read_back(c.name);
    EXPECT_EQ(back.kind, "rope_cache");
    EXPECT_EQ(rope_spec_json(back.rope_spec), rope_spec_json(c.spec));
    EXPECT_EQ(back.q_heads, c.q_heads);
    EXPECT_EQ(back.tokens, static_cast<std::int64_t>(c.positions.size()));
    const KvCacheSpec& k = back.cache;
    EXPECT_EQ(k.layout, c.cache.layout);
    EXPECT_EQ(k.storage, c.cache.storage);
    EXPECT_EQ(k.blocks, c.cache.blocks);
    EXPECT_EQ(k.block_size, c.cache.block_size);
    EXPECT_EQ(k.kv_heads, c.cache.kv_heads);
    EXPECT_EQ(k.head_dim, c.cache.head_dim);
    EXPECT_EQ(k.latent_dim, c.cache.latent_dim);
    EXPECT_EQ(k.k_scale, c.cache.k_scale);  // floats through JSON's shortest round trip: exact
    EXPECT_EQ(k.v_scale, c.cache.v_scale);
    EXPECT_EQ(k.scale_direction, c.cache.scale_direction);
    EXPECT_EQ(k.padding, c.cache.padding);
    const Json& cache = entry(c.name)["cache"];
    EXPECT_EQ(cache["shape"], back.file("k_cache_initial").shape);
    EXPECT_EQ(cache["scale_granularity"], !is_fp8(k.storage)     ? "none"
                                          : k.k_scale.size() == 1 ? "per_tensor"
                                                                  : "per_head");
    // q is held to an fp32 RoPE case's bound; the cache to its storage's step.
    EXPECT_EQ(back.rope_tolerance.rounding, kRoundingUnits);
    EXPECT_EQ(back.rope_tolerance.storage, 0.0);
    const CacheTolerance& t = back.cache_tolerance;
    switch (k.storage) {
      case CacheStorage::fp32: EXPECT_EQ(t.unit_roundoff, 0.0); break;
      case CacheStorage::bf16: EXPECT_EQ(t.unit_roundoff, 0x1p-8); break;
      case CacheStorage::fp16:
        EXPECT_EQ(t.unit_roundoff, 0x1p-11);
        EXPECT_EQ(t.smallest_normal, 0x1p-14);
        break;
      case CacheStorage::fp8_e4m3:
      case CacheStorage::fp8_e5m2: {
        const Fp8Format format = k.storage == CacheStorage::fp8_e4m3 ? Fp8Format::e4m3 : Fp8Format::e5m2;
        EXPECT_EQ(t.unit_roundoff, fp8_unit_roundoff(format));
        EXPECT_EQ(t.unit_roundoff * t.smallest_normal, fp8_rounding_error(format, 0.0));
        EXPECT_EQ(t.scale_rounding, 0x1p-23 + 0x1p-48);
        break;
      }
    }
    EXPECT_EQ(t.saturates_at, largest(k.storage));
    if (!is_fp8(k.storage)) {
      EXPECT_EQ(t.scale_rounding, 0.0);
    }
  }
}

// The files against a hand computation, apart from the writer: each valid token's row lies at the
// layout's own index formula (written out here from the issue's shapes), holds the stored-domain
// value (v times or over its scale, exactly in double; pair 0 of k rotated by its position on an
// unscaled case), narrowed once; every other element and every padding row is as it was.
TEST_F(RopeCacheVectors, TheFilesAreTheCallOnTheInitialCacheRoundedOnce) {
  for (const GoldenRopeCacheCase& c : golden_rope_cache_cases()) {
    SCOPED_TRACE(c.name);
    const ManifestCase& back = read_back(c.name);
    const KvCacheSpec& cache = c.cache;
    const bool mla = cache.layout == CacheLayout::mla;
    EXPECT_EQ(read_npy(back.file("slots").path).as_int64(), c.slots);
    const auto k = read_npy(back.file("k").path).as_float32();
    const auto v = read_npy(back.file("v").path).as_float32();
    const std::string storage(to_string(cache.storage));
    const std::int64_t dim = cache.head_dim, v_dim = mla ? cache.latent_dim : dim;
    const std::int64_t row = row_features(cache);
    for (const std::string which : {"k", "v"}) {
      if (mla && which == "v") continue;
      const auto initial = read_npy(back.file(which + "_cache_initial").path).data;
      const auto after = read_npy(back.file(which + "_cache_expected_" + storage).path).data;
      const auto rows = read_npy(back.file(which + "_rows_expected").path).as_float64();
      EXPECT_EQ(initial, initial_cache(c, which.c_str()));
      const std::int64_t features = which == "k" ? row : dim;
      const auto size = static_cast<std::size_t>(element_bytes(cache.storage));
      std::vector<bool> written(static_cast<std::size_t>(cache_elements(cache)), false);
      for (std::size_t t = 0; t < c.slots.size(); ++t) {
        const std::int64_t slot = c.slots[t];
        for (std::int64_t h = 0; h < cache.kv_heads; ++h) {
          for (std::int64_t f = 0; f < features; ++f) {
            const double y = rows[(t * static_cast<std::size_t>(cache.kv_heads) + static_cast<std::size_t>(h)) *
                                      static_cast<std::size_t>(features) + static_cast<std::size_t>(f)];
            if (slot < 0) {
              ASSERT_TRUE(std::isnan(y)) << "a padding token writes nothing";
              continue;
            }
            const std::int64_t block = slot / cache.block_size, offset = slot % cache.block_size;
            const std::int64_t index =
                cache.layout == CacheLayout::hnd
                    ? ((block * cache.kv_heads + h) * cache.block_size + offset) * dim + f
                    : ((block * cache.block_size + offset) * cache.kv_heads + h) * features + f;
            written[static_cast<std::size_t>(index)] = true;
            std::vector<std::byte> want(size);
            write_cache_element(cache.storage, want, 0, 0.0f);
            if (is_fp8(cache.storage)) {
              want[0] = std::byte{fp8_from_double(y, cache.storage == CacheStorage::fp8_e4m3 ? Fp8Format::e4m3
                                                                                               : Fp8Format::e5m2)};
            } else if (cache.storage == CacheStorage::bf16) {
              const std::uint16_t bits = bf16_from_double(y);
              std::memcpy(want.data(), &bits, size);
            } else {  // fp32 and fp16 values here are rounded once through float (exact for fp32)
              write_cache_element(cache.storage, want, 0, static_cast<float>(y));
            }
            if (cache.storage != CacheStorage::fp16) {
              ASSERT_EQ(std::memcmp(after.data() + static_cast<std::size_t>(index) * size, want.data(), size), 0)
                  << which << " token " << t << " head " << h << " feature " << f;
            }
            // The stored domain: v (and the latent) scaled exactly in double; pair 0 of k rotated.
            const bool of_v = which == "v" || (mla && f < cache.latent_dim);
            const double scale = cache_scale(cache, !of_v, h);
            const double sigma = cache.scale_direction == ScaleDirection::multiply ? scale : 1.0 / scale;
            if (of_v) {
              const double x = v[(t * static_cast<std::size_t>(cache.kv_heads) + static_cast<std::size_t>(h)) *
                                     static_cast<std::size_t>(v_dim) + static_cast<std::size_t>(f)];
              ASSERT_EQ(y, cache.scale_direction == ScaleDirection::multiply ? x * scale : x / scale);
            } else if (const std::int64_t kf = mla ? f - cache.latent_dim : f;
                       kf == 0 && c.spec.scaling.kind == ScalingKind::none) {
              const std::size_t at = (t * static_cast<std::size_t>(cache.kv_heads) + static_cast<std::size_t>(h)) *
                                     static_cast<std::size_t>(dim);
              const std::size_t partner = at + (c.spec.layout == Layout::interleaved ? 1 : static_cast<std::size_t>(dim / 2));
              const long double m = static_cast<long double>(c.positions[t]);
              const double rotated = static_cast<double>(k[at] * std::cos(m) - k[partner] * std::sin(m));
              EXPECT_NEAR(y, sigma * rotated, 0x1p-50 * sigma * std::hypot(k[at], k[partner]));
            }
          }
        }
      }
      for (std::size_t i = 0; i < written.size(); ++i) {
        if (written[i]) continue;
        ASSERT_EQ(std::memcmp(after.data() + i * size, initial.data() + i * size, size), 0) << which << " element " << i;
      }
      // The sentinel has no zeros: a port writing zeros where nothing belongs cannot pass.
      for (std::int64_t i = 0; i < cache_elements(cache); ++i) {
        ASSERT_NE(read_cache_element(cache.storage, initial, i), 0.0f) << which << " element " << i;
      }
    }
  }
}

// The fp16 cache's written elements: fp16_from_double of the row (one rounding from double).
TEST_F(RopeCacheVectors, Fp16CachesHoldTheRowsRoundedOnceFromDouble) {
  int checked = 0;
  for (const GoldenRopeCacheCase& c : golden_rope_cache_cases()) {
    if (c.cache.storage != CacheStorage::fp16) continue;
    const ManifestCase& back = read_back(c.name);
    const auto after = read_npy(back.file("k_cache_expected_fp16").path).as_float16();
    const auto rows = read_npy(back.file("k_rows_expected").path).as_float64();
    for (std::size_t t = 0; t < c.slots.size(); ++t) {
      if (c.slots[t] < 0) continue;
      for (std::int64_t h = 0; h < c.cache.kv_heads; ++h) {
        for (std::int64_t f = 0; f < c.cache.head_dim; ++f) {
          const double y = rows[(t * static_cast<std::size_t>(c.cache.kv_heads) + static_cast<std::size_t>(h)) *
                                    static_cast<std::size_t>(c.cache.head_dim) + static_cast<std::size_t>(f)];
          ASSERT_EQ(after[static_cast<std::size_t>(cache_index(c.cache, c.slots[t], h, f))].bits, fp16_from_double(y).bits);
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 0);
}

// A format 4 manifest (before the fused cases) reads and judges its RoPE cases; a rope_cache
// case in one is refused, as is a fused case whose cache lacks a field or names an unknown value.
TEST_F(RopeCacheVectors, OlderManifestsStillReadAndRefuseFusedCases) {
  const ScratchDir scratch("ropecheck_rope_cache_v4");
  const fs::path v4 = scratch / "golden_v4";
  fs::copy(vectors(), v4, fs::copy_options::recursive);
  Json json = *json_;
  json["format"] = kVectorsFormatV4;
  Json without = Json::array();
  for (const Json& c : json["cases"]) {
    if (c["kind"] != "rope_cache" && c["kind"] != "rope_form") without.push_back(c);
  }
  const auto edit = [&](const Json& cases) {
    Json edited = json;
    edited["cases"] = cases;
    std::ofstream(v4 / "manifest.json") << edited.dump(2);
  };
  edit(without);
  const Manifest read = read_manifest(v4);
  EXPECT_EQ(read.format, kVectorsFormatV4);
  EXPECT_EQ(read.cases.size(), without.size());

  Json with_fused = Json::array();  // the fused cases, not yet the call forms (format 6)
  for (const Json& c : json["cases"]) {
    if (c["kind"] != "rope_form") with_fused.push_back(c);
  }
  edit(with_fused);
  try {
    read_manifest(v4);
    ADD_FAILURE() << "a rope_cache case in a format 4 manifest was read";
  } catch (const InvalidInput& e) {
    EXPECT_TRUE(test::contains(e.what(), "kind rope_cache came with format ropecheck.vectors/5")) << e.what();
  }

  json["format"] = kVectorsFormat;
  const std::string name = golden_rope_cache_cases().front().name;
  const auto expect_refused = [&](const auto& change, const std::string& part) {
    Json cases = json["cases"];
    for (Json& c : cases) {
      if (c["name"] == name) change(c["cache"]);
    }
    edit(cases);
    try {
      read_manifest(v4);
      ADD_FAILURE() << "accepted; expected '" << part << "'";
    } catch (const InvalidInput& e) {
      EXPECT_TRUE(test::contains(e.what(), "case " + name)) << e.what();
      EXPECT_TRUE(test::contains(e.what(), part)) << e.what();
    }
  };
  expect_refused([](Json& cache) { cache.erase("padding"); }, "padding");
  expect_refused([](Json& cache) { cache["layout"] = "nhwc"; }, "unknown cache layout 'nhwc' (nhd, hnd, mla)");
  expect_refused([](Json& cache) { cache["block_size"] = 0; }, "block_size 0");
}

TEST(RoundOnce, Fp8FromDoubleRoundsOnceToNearestEvenAndSaturates) {
  for (const Fp8Format format : {Fp8Format::e4m3, Fp8Format::e5m2}) {
    SCOPED_TRACE(std::string(to_string(format)));
    const Fp8Traits t = fp8_traits(format);
    // Every pair of neighbouring non-negative codes: just under the midpoint goes down, just over
    // goes up, the midpoint itself to the even code; the same negated.
    for (std::uint8_t code = 0; code < t.max_bits; ++code) {
      const double low = float_from_fp8(code, format), high = float_from_fp8(static_cast<std::uint8_t>(code + 1), format);
      const double mid = (low + high) / 2;
      const double nudge = (high - low) * 0x1p-30;
      EXPECT_EQ(fp8_from_double(mid - nudge, format), code);
      EXPECT_EQ(fp8_from_double(mid + nudge, format), code + 1);
      EXPECT_EQ(fp8_from_double(mid, format), (code & 1) == 0 ? code : code + 1);
      EXPECT_EQ(fp8_from_double(-(mid + nudge), format), 0x80 | (code + 1));
    }
    // Past the largest, Inf included: the largest; NaN stays NaN.
    for (const double x : {static_cast<double>(t.max) * 1.03, static_cast<double>(t.max) * 4, 1e300,
                           static_cast<double>(INFINITY)}) {
      EXPECT_EQ(fp8_from_double(x, format), t.max_bits) << x;
      EXPECT_EQ(fp8_from_double(-x, format), 0x80 | t.max_bits) << x;
    }
    EXPECT_TRUE(std::isnan(float_from_fp8(fp8_from_double(NAN, format), format)));
  }
  // Where rounding through float would land on a midpoint and tie the wrong way: 1.0625 + 2^-30
  // is nearer e4m3's 1.125 than its 1, but float(x) is the midpoint 1.0625, which ties to 1.
  const double x = 1.0625 + 0x1p-30;
  EXPECT_EQ(fp8_from_float(static_cast<float>(x), Fp8Format::e4m3), 0x38);  // 1.0: the double rounding
  EXPECT_EQ(float_from_fp8(fp8_from_double(x, Fp8Format::e4m3), Fp8Format::e4m3), 1.125f);
}

}  // namespace
}  // namespace ropecheck
