// The golden vectors (`ropecheck vectors`): regenerated into a temp dir, read back with the npy
// reader, and held to what the manifest promises: every real implementation within the
// manifest's tolerance, hand-computed values, the .npy bytes as documented, the CLI's refusals.
//   cmake --build build --target vectors_tests && build/tests/vectors_tests;  ctest -L vectors
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "vectors/vectors.h"
#include "cli/cli_app.h"
#include "core/exit_codes.h"
#include "vectors/golden_cases.h"
#include "vectors/rope_cache_golden_cases.h"
#include "vectors/rope_form_golden_cases.h"
#include "core/errors.h"
#include "vectors/npy.h"
#include "impls/registry.h"
#include "core/storage.h"
#include "core/tolerance.h"
#include "impls/oracle/oracle.h"
#include "vectors/manifest_reader.h"
#include "tests/support/test_config.h"
#include "tests/support/test_process.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using test::ScratchDir;
using test::slurp;

// The vectors, generated once for the whole suite, as a porter would receive them.
class Vectors : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir("ropecheck_vectors");
    std::ostringstream out;
    ASSERT_EQ(run_vectors(VectorsOptions{*dir_ / "golden"}, out), kExitOk);
    summary_ = new std::string(out.str());
    manifest_ = new Json(Json::parse(slurp(*dir_ / "golden" / "manifest.json")));
  }
  static void TearDownTestSuite() {
    delete dir_;  // removes the vectors
    delete summary_;
    delete manifest_;
  }

  static const Json& manifest() { return *manifest_; }
  static fs::path root() { return *dir_ / "golden"; }
  static NpyArray file(const Json& c, const std::string& key) {
    return read_npy(root() / c["files"][key]["path"].get<std::string>());
  }
  // q or k as floats: '<f4' as is, fp16 ('<f2') and bf16 bit patterns widened (exactly).
  static std::vector<float> input(const Json& c, const std::string& key) {
    const NpyArray array = file(c, key);
    if (array.descr == kNpyFloat32) return array.as_float32();
    std::vector<float> widened;
    if (array.descr == kNpyFloat16) {
      for (const Fp16 half : array.as_float16()) widened.push_back(float_from_fp16(half));
      return widened;
    }
    for (const auto bits : array.as_uint16()) widened.push_back(float_from_bf16(bits));
    return widened;
  }
  static StorageType dtype_of(const Json& c) {
    if (c["dtype"] == "bf16") return StorageType::bf16;
    if (c["dtype"] == "fp16") return StorageType::fp16;
    return StorageType::fp32;
  }
  // The spec with its scaling (manifest_reader.h; scaled_vectors_test.cc checks that it reads
  // back every golden case's spec exactly).
  static RopeSpec spec_of(const Json& c) { return rope_spec_from_json(c["spec"]); }
  static bool scaled(const Json& c) { return c["spec"]["scaling"]["kind"] != "none"; }

  static ScratchDir* dir_;
  static std::string* summary_;
  static Json* manifest_;
};

ScratchDir* Vectors::dir_ = nullptr;
std::string* Vectors::summary_ = nullptr;
Json* Vectors::manifest_ = nullptr;

// Feature indices (a, b) of the pair that feature f of a row belongs to, and the pair's index.
struct Pair {
  int i, a, b;
};
Pair pair_of(const RopeSpec& spec, int f) {
  const int half = spec.rotary_dim / 2;
  if (spec.layout == Layout::interleaved) return {f / 2, f - f % 2, f - f % 2 + 1};
  const int i = f % half;
  return {i, i, i + half};
}

std::vector<float> widen(const std::vector<Fp16>& halves) {
  std::vector<float> values;
  for (const Fp16 half : halves) values.push_back(float_from_fp16(half));
  return values;
}

// Whether h is x rounded to nearest fp16, ties to even, checked against h's two neighbours rather
// than by rounding x (the code under test rounds). 0x7C00 (Inf) stands for 65536, the next value
// were the exponent unbounded: IEEE's overflow rule.
bool is_nearest_fp16(Fp16 h, double x) {
  if (std::isnan(x)) return (h.bits & 0x7FFF) > 0x7C00;
  if (std::signbit(x) != ((h.bits & 0x8000) != 0)) return false;
  const auto value = [](int magnitude) {
    if (magnitude >= 0x7C00) return 65536.0;
    return static_cast<double>(float_from_fp16({static_cast<std::uint16_t>(magnitude)}));
  };
  const int magnitude = h.bits & 0x7FFF;
  if (magnitude > 0x7C00) return false;
  if (magnitude == 0x7C00 && std::isinf(x)) return true;
  const double ax = std::abs(x), distance = std::abs(value(magnitude) - ax);
  for (const int neighbour : {magnitude - 1, magnitude + 1}) {
    if (neighbour < 0 || neighbour > 0x7C00) continue;
    const double d = std::abs(value(neighbour) - ax);
    if (d < distance || (d == distance && neighbour % 2 == 0)) return false;
  }
  return true;
}

TEST_F(Vectors, SummaryAndManifestListEveryCase) {
  const auto expected =
      golden_rope_cases().size() + golden_sinusoidal_cases().size() + golden_rope_cache_cases().size() +
      golden_rope_form_cases().size();
  ASSERT_EQ(manifest()["cases"].size(), expected);
  EXPECT_EQ(manifest()["format"], "ropecheck.vectors/6");
  EXPECT_NE(summary_->find(std::to_string(expected) + " golden cases"), std::string::npos) << *summary_;
  std::uintmax_t bytes = 0;
  for (const auto& entry : fs::recursive_directory_iterator(root())) {
    if (entry.is_regular_file()) bytes += entry.file_size();
  }
  EXPECT_NE(summary_->find(std::to_string(bytes) + " bytes"), std::string::npos) << *summary_;
  // 4.3 MB with the backward cases, 6.9 MB with the fused call's (whole caches of a few blocks),
  // 8.3 MB with the call forms' (whole buffers, float64 rows and bounds): small enough to copy
  // into any port's test data.
  EXPECT_LT(bytes, 8u << 20) << "the golden set is meant to stay small";
}

// One case's expected values and bound as the manifest states them, applied as a porter would:
// err = |y - expected| / (2^-23 max(hypot(x_a, x_b), pair_norm_floor)) <= bound, a zero pair
// exactly zero, features past rotary_dim bit for bit. Returns the worst err / bound. Written here
// from the manifest's formula text, apart from vectors/judge.cc, which `ropecheck check` uses.
class ManifestBound {
 public:
  ManifestBound(const Json& c, const RopeSpec& spec, std::vector<std::int64_t> positions,
                std::vector<double> theta)
      : c_(c), spec_(spec), positions_(std::move(positions)), theta_(std::move(theta)),
        units_(c["tolerance"]["rotation_bound_units"]),
        floor_(c["tolerance"]["pair_norm_floor"].get<double>()),
        axes_(static_cast<std::size_t>(axis_count(spec))), axis_of_(pair_axes(spec.axes, spec.rotary_dim)) {}

  double check(const std::vector<float>& got, const std::vector<float>& in,
               const std::vector<double>& want, std::size_t heads, AnglePrecision angles,
               const std::string& who) const {
    const double flat = units_["rounding"].get<double>() + units_["storage"].get<double>();
    const double a = units_["attention_factor"].get<double>();
    const auto dim = static_cast<std::size_t>(spec_.head_dim);
    double worst = 0;
    for (std::size_t j = 0; j < got.size(); ++j) {
      const auto f = static_cast<int>(j % dim);
      const std::size_t row = j - static_cast<std::size_t>(f);
      if (f >= spec_.rotary_dim) {
        if (got[j] == in[j]) continue;
        ADD_FAILURE() << who << " changed the tail of " << c_["name"] << ", element " << j;
        return worst;  // one message per run, not thousands
      }
      const Pair p = pair_of(spec_, f);
      // The pair's own axis's position (token-major, axis_count(spec) per token).
      const std::int64_t m = positions_[j / (heads * dim) * axes_ + static_cast<std::size_t>(axis_of_[static_cast<std::size_t>(p.i)])];
      double bound = flat;
      if (angles == AnglePrecision::fp32) {
        const double theta_i = theta_[static_cast<std::size_t>(p.i)];
        const auto& per_radian = units_["fp32_angles_per_radian"];
        bound += units_["fp32_attention_scaling"].get<double>() +
                 (per_radian["per_abs_ln_theta"].get<double>() * std::abs(std::log(theta_i)) +
                  per_radian["constant"].get<double>() + per_radian["blend"].get<double>()) *
                     std::abs(static_cast<double>(m) * theta_i);
      } else if (angles == AnglePrecision::fp32_recurrence) {
        const double theta_i = theta_[static_cast<std::size_t>(p.i)];
        const auto& per_radian = units_["fp32_recurrence_angles_per_radian"];
        const double k = p.i * (per_radian["log_ratio"].get<double>() +
                                per_radian["per_pair_ulps"].get<double>()) +
                         per_radian["constant_ulps"].get<double>();
        bound += units_["fp32_attention_scaling"].get<double>() +
                 (k / 2 / (1 - k * 0x1p-24) + per_radian["blend"].get<double>()) *
                     std::abs(static_cast<double>(m) * theta_i);
      }
      bound *= a;
      const double pair =
          std::hypot(in[row + static_cast<std::size_t>(p.a)], in[row + static_cast<std::size_t>(p.b)]);
      if (pair == 0) {
        if (got[j] == 0) continue;
        ADD_FAILURE() << who << " on " << c_["name"] << ": a zero pair rotated to " << got[j];
        return worst;
      }
      const double err = std::abs(got[j] - want[j]) / (0x1p-23 * std::max(pair, floor_));
      worst = std::max(worst, err / bound);
      if (!(err <= bound)) {
        ADD_FAILURE() << who << " on " << c_["name"] << " (" << to_string(angles) << " angles), element "
                      << j << ", position " << m << ": got " << got[j] << ", expected " << want[j]
                      << ", err " << err << " > " << bound << " units";
        return worst;
      }
    }
    return worst;
  }

 private:
  const Json& c_;
  RopeSpec spec_;
  std::vector<std::int64_t> positions_;
  std::vector<double> theta_;
  const Json& units_;
  double floor_;
  std::size_t axes_;
  std::vector<int> axis_of_;
};

// (1) The manifest's tolerance, as a porter applies it, holds for every real implementation:
// fp32 cases on every fp32 implementation, bf16 and fp16 cases on the implementations storing
// that type (their fp32 entry point, with the inputs widened; fp16 ones also on the '<f2' file's
// values directly, through apply_fp16), in every angle precision each supports.
TEST_F(Vectors, EveryImplementationMeetsTheManifestTolerance) {
  for (const auto& c : manifest()["cases"]) {
    if (c["kind"] != "rope") continue;
    const RopeSpec golden = spec_of(c);
    const StorageType dtype = dtype_of(c);
    const auto& units = c["tolerance"]["rotation_bound_units"];
    ASSERT_DOUBLE_EQ(units["attention_factor"].get<double>() *
                         (units["rounding"].get<double>() + units["storage"].get<double>()),
                     units["fp64_angles"].get<double>()) << c["name"];
    const auto positions = file(c, "positions").as_int64();
    const auto tokens = static_cast<std::int64_t>(positions.size()) / axis_count(golden);
    const ManifestBound bound(c, golden, positions, file(c, "theta").as_float64());
    const auto q_in = input(c, "q"), k_in = input(c, "k");
    const auto q_want = file(c, "q_expected").as_float64(), k_want = file(c, "k_expected").as_float64();
    const auto q_heads = c["q_heads"].get<std::int64_t>(), kv_heads = c["kv_heads"].get<std::int64_t>();
    int checked = 0, checked_stored = 0;
    for (const RopeImpl* impl : rope_implementations()) {
      const auto caps = impl->capabilities();
      if (!caps.available || caps.storage != dtype) continue;
      for (const AnglePrecision angles : caps.angle_precisions) {
        RopeSpec spec = golden;
        spec.angle_precision = angles;
        if (!caps.supports(spec)) continue;
        ++checked;
        const std::string who(impl->id());
        const auto record = [&](const std::string& label, const std::vector<float>& q,
                                const std::vector<float>& k) {
          const double worst = std::max(
              bound.check(q, q_in, q_want, static_cast<std::size_t>(q_heads), angles, label),
              bound.check(k, k_in, k_want, static_cast<std::size_t>(kv_heads), angles, label));
          RecordProperty(label + "/" + c["name"].get<std::string>(), std::to_string(worst));
        };
        auto q = q_in, k = k_in;
        impl->apply(spec, HeadTensor{q, tokens, q_heads, spec.head_dim},
                    HeadTensor{k, tokens, kv_heads, spec.head_dim}, positions);
        record(who, q, k);
        if (dtype == StorageType::fp16) {  // the '<f2' values as stored, no float in between
          auto q16 = file(c, "q").as_float16(), k16 = file(c, "k").as_float16();
          impl->apply_fp16(spec, Fp16HeadTensor{q16, tokens, q_heads, spec.head_dim},
                           Fp16HeadTensor{k16, tokens, kv_heads, spec.head_dim}, positions);
          record(who + " (apply_fp16)", widen(q16), widen(k16));
          ++checked_stored;
        }
        if (HasFailure()) return;
      }
    }
    EXPECT_GE(checked, dtype == StorageType::fp32 ? 3 : 1) << c["name"] << ": too few implementations checked";
    if (dtype == StorageType::fp16) {
      EXPECT_GE(checked_stored, 1) << c["name"];
    }
  }
}

// The fp16 floor is what lets a correct port pass on subnormal pairs, and it is no licence to
// flush them: the correctly rounded expected_fp16 meets the bound on every fp16 case, and the
// same values with subnormals flushed to zero (a port whose fp16 conversions or arithmetic flush
// denormals, as Arm's FPCR.FZ16 mode does) do not, on the cases whose pairs all lie under the
// floor. (A subnormal output of a pair far above it, a near cancellation in the rotation, is
// within fp16's rounding of that pair: flushing it is no error any bound should see.)
TEST_F(Vectors, Fp16BoundAcceptsCorrectRoundingAndRejectsFlushedSubnormals) {
  int flushed_cases = 0;
  for (const auto& c : manifest()["cases"]) {
    if (c["dtype"] != "fp16" || c["kind"] != "rope") continue;  // rope_form: rope_form_vectors_test.cc
    const RopeSpec spec = spec_of(c);
    const ManifestBound bound(c, spec, file(c, "positions").as_int64(), file(c, "theta").as_float64());
    for (const std::string tensor : {"q", "k"}) {
      const auto heads = c[tensor == "q" ? "q_heads" : "kv_heads"].get<std::size_t>();
      const auto in = input(c, tensor);
      const auto want = file(c, tensor + "_expected").as_float64();
      const auto rounded = widen(file(c, tensor + "_expected_fp16").as_float16());
      EXPECT_LE(bound.check(rounded, in, want, heads, AnglePrecision::fp64, "expected_fp16"), 1.0);
      const auto above_floor = [](float x) { return std::abs(x) > kFp16MinNormal; };
      if (std::any_of(in.begin(), in.end(), above_floor)) continue;
      auto flushed = rounded;
      bool any = false;
      for (float& y : flushed) {
        if (y != 0 && std::abs(y) < kFp16MinNormal) {
          y = 0;
          any = true;
        }
      }
      if (!any) continue;
      ++flushed_cases;
      ::testing::TestPartResultArray failures;
      {
        ::testing::ScopedFakeTestPartResultReporter reporter(
            ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
        bound.check(flushed, in, want, heads, AnglePrecision::fp64, "flushed");
      }
      EXPECT_GT(failures.size(), 0) << c["name"] << "/" << tensor << ": flushing subnormals passed the bound";
    }
  }
  EXPECT_GT(flushed_cases, 0) << "no fp16 case has subnormal outputs";
}

// The convenience files are the float64 expected rounded once to the case's dtype.
TEST_F(Vectors, RoundedExpectedIsTheExpectedRoundedOnce) {
  for (const auto& c : manifest()["cases"]) {
    if (c["kind"] == "rope_form") continue;  // one buffer_expected_<dtype>: rope_form_vectors_test.cc
    const std::string dtype = c["dtype"];
    for (const std::string tensor : {"q", "k", "pe"}) {
      if (!c["files"].contains(tensor + "_expected")) continue;
      const auto exact = file(c, tensor + "_expected").as_float64();
      const NpyArray rounded = file(c, tensor + "_expected_" + dtype);
      if (dtype == "fp32") {
        const auto values = rounded.as_float32();
        for (std::size_t j = 0; j < exact.size(); ++j) ASSERT_EQ(values[j], static_cast<float>(exact[j]));
        continue;
      }
      if (dtype == "fp16") {  // '<f2', and the nearest fp16 to the double, not to its float
        const auto halves = rounded.as_float16();
        for (std::size_t j = 0; j < exact.size(); ++j) {
          ASSERT_TRUE(is_nearest_fp16(halves[j], exact[j]))
              << c["name"] << " element " << j << ": " << exact[j] << " -> " << float_from_fp16(halves[j]);
          ASSERT_EQ(halves[j].bits, fp16_from_double(exact[j]).bits) << c["name"] << " element " << j;
        }
        continue;
      }
      const auto bits = rounded.as_uint16();
      for (std::size_t j = 0; j < exact.size(); ++j) {
        const double got = float_from_bf16(bits[j]), e = exact[j];
        // Half a bf16 ulp (8 significant bits) of e's binade.
        const double half_ulp = e == 0 ? 0 : std::ldexp(1.0, std::ilogb(e) - 8);
        ASSERT_LE(std::abs(got - e), half_ulp) << c["name"] << " element " << j;
      }
    }
  }
}

// (2) Values derived by hand from the spec, independently of the oracle. The frequency-scaled
// cases are recomputed from the manifest and the .npy files alone, in high precision, by
// recompute_scaled_vectors.py (ctest -R vectors_recompute).
TEST_F(Vectors, HandComputedValues) {
  int zero_positions = 0;
  for (const auto& c : manifest()["cases"]) {
    if (c["kind"] == "rope_cache" || c["kind"] == "rope_form") continue;  // rope_cache_, rope_form_vectors_test.cc
    const auto positions = file(c, "positions").as_int64();
    if (c["kind"] == "sinusoidal") {
      const int d = c["spec"]["d_model"];
      const auto pe = file(c, "pe_expected").as_float64();
      for (std::size_t t = 0; t < positions.size(); ++t) {
        const auto at = t * static_cast<std::size_t>(d);
        if (positions[t] == 0) {
          for (int j = 0; j < d; ++j) ASSERT_EQ(pe[at + static_cast<std::size_t>(j)], j % 2 == 0 ? 0.0 : 1.0);
        }
        if (positions[t] == 1) {  // pair 0 has w_0 = 1: (sin 1, cos 1)
          EXPECT_NEAR(pe[at], static_cast<double>(std::sin(1.0L)), 0x1p-52);
          EXPECT_NEAR(pe[at + 1], static_cast<double>(std::cos(1.0L)), 0x1p-52);
          EXPECT_NEAR(pe[at], 0.8414709848078965, 1e-16);
        }
      }
      continue;
    }
    // Scaled cases: recompute_scaled_vectors.py; multi-axis ones: axes_vectors_test.cc.
    if (scaled(c) || c["spec"]["axes"]["mode"] != "none") continue;
    const RopeSpec spec = spec_of(c);
    const auto theta = file(c, "theta").as_float64();
    ASSERT_EQ(theta.size(), static_cast<std::size_t>(spec.rotary_dim / 2));
    EXPECT_EQ(theta[0], 1.0);
    const std::size_t last = theta.size() - 1;
    EXPECT_NEAR(theta[last], std::pow(spec.base, -2.0 * static_cast<double>(last) / spec.rotary_dim),
                1e-15 * theta[last]);
    for (const std::string tensor : {"q", "k"}) {
      const auto x = input(c, tensor);
      const auto want = file(c, tensor + "_expected").as_float64();
      const auto heads = c[tensor == "q" ? "q_heads" : "kv_heads"].get<std::size_t>();
      const auto dim = static_cast<std::size_t>(spec.head_dim);
      const Pair p0 = pair_of(spec, 0);
      for (std::size_t t = 0; t < positions.size(); ++t) {
        const std::size_t row = t * heads * dim;  // head 0
        if (positions[t] == 0) {
          ++zero_positions;
          for (std::size_t j = row; j < row + heads * dim; ++j) ASSERT_EQ(want[j], static_cast<double>(x[j]));
        }
        // Pair 0 rotates by theta_0 = 1: by m radians (the backward's gradient by -m).
        const long double m = static_cast<long double>(positions[t]) * (c["spec"]["pass"] == "backward" ? -1 : 1);
        const long double xa = x[row + static_cast<std::size_t>(p0.a)], xb = x[row + static_cast<std::size_t>(p0.b)];
        const double ya = static_cast<double>(xa * std::cos(m) - xb * std::sin(m));
        const double yb = static_cast<double>(xa * std::sin(m) + xb * std::cos(m));
        const double scale = 0x1p-51 * static_cast<double>(std::hypot(xa, xb));
        EXPECT_NEAR(want[row + static_cast<std::size_t>(p0.a)], ya, scale) << c["name"] << " position " << m;
        EXPECT_NEAR(want[row + static_cast<std::size_t>(p0.b)], yb, scale) << c["name"] << " position " << m;
      }
    }
  }
  EXPECT_GT(zero_positions, 0) << "some case must contain position 0";
}

TEST_F(Vectors, ManifestToleranceNumbersAreTheDerivedOnes) {
  int scaled_with_attention = 0, blended = 0;
  for (const auto& c : manifest()["cases"]) {
    if (c["kind"] != "rope") continue;
    const auto& units = c["tolerance"]["rotation_bound_units"];
    const StorageType dtype = dtype_of(c);
    const RopeSpec spec = spec_of(c);
    const RopeScaling& s = spec.scaling;
    // The attention factor from the oracle's own formula, not frequency.h's.
    const double a = static_cast<double>(oracle_attention_factor(spec));
    // u_s / eps32 (1 + 2^-22): 2^-8 / 2^-23 for bf16, 2^-11 / 2^-23 for fp16.
    const double storage = dtype == StorageType::bf16   ? 0x1p15 * (1 + 0x1p-22)
                           : dtype == StorageType::fp16 ? 0x1p12 * (1 + 0x1p-22)
                                                        : 0.0;
    // The smallest normal of the dtype over a: fp16 rounding is absolute (2^-25) under 2^-14.
    const double floor = (dtype == StorageType::fp16 ? 0x1p-14 : 0x1p-126) / a;
    // tolerance.md: YaRN and Llama 3 tables blended in fp32.
    const double blend = s.kind == ScalingKind::yarn ? 1.5 * (s.factor - 1) + 0.5
                         : s.kind == ScalingKind::llama3
                             ? (1.5 * s.high_freq_factor / (s.high_freq_factor - s.low_freq_factor) + 1) *
                                       (s.factor - 1) + 0.5
                             : 0.0;
    EXPECT_DOUBLE_EQ(c["tolerance"]["pair_norm_floor"].get<double>(), floor) << c["name"];
    // tolerance.h's floor of the manifest's own a (the oracle's a may be an ulp away: DeepSeek's
    // mscale ratio divides in long double there).
    EXPECT_EQ(c["tolerance"]["pair_norm_floor"].get<double>(),
              unit_pair_norm(dtype, units["attention_factor"].get<double>(), 0x1p-200))
        << "the manifest's floor is tolerance.h's";
    EXPECT_EQ(0.5, unit_pair_norm(dtype, 1.0, 0.5)) << "and |p| above it";
    EXPECT_EQ(units["rounding"].get<double>(), 2.0);
    EXPECT_EQ(units["storage"].get<double>(), storage);
    EXPECT_NEAR(units["attention_factor"].get<double>(), a, 1e-15 * a) << c["name"];
    EXPECT_DOUBLE_EQ(units["fp64_angles"].get<double>(), a * (2.0 + storage)) << c["name"];
    EXPECT_EQ(units["fp32_attention_scaling"].get<double>(), a != 1.0 ? 1.5 : 0.0) << c["name"];
    EXPECT_EQ(units["fp32_angles_per_radian"]["per_abs_ln_theta"].get<double>(), 0.5);
    EXPECT_EQ(units["fp32_angles_per_radian"]["constant"].get<double>(), 3.5);
    EXPECT_DOUBLE_EQ(units["fp32_angles_per_radian"]["blend"].get<double>(), blend) << c["name"];
    EXPECT_FALSE(c["tolerance"]["derivation"].empty());
    scaled_with_attention += a != 1.0;
    blended += blend != 0.0;
  }
  EXPECT_GT(scaled_with_attention, 0) << "no case exercises the attention factor's terms";
  EXPECT_GT(blended, 0) << "no case exercises the blend term";
}

// The registry's sinusoidal tables meet the manifest's sinusoidal tolerance too.
TEST_F(Vectors, SinusoidalTablesMeetTheManifestTolerance) {
  for (const auto& c : manifest()["cases"]) {
    if (c["kind"] != "sinusoidal") continue;
    const SinusoidalSpec spec{c["spec"]["d_model"].get<int>(), c["spec"]["base"].get<double>()};
    const auto positions = file(c, "positions").as_int64();
    const auto want = file(c, "pe_expected").as_float64();
    const auto& units = c["tolerance"]["bound_units"];
    for (const SinusoidalImpl* impl : sinusoidal_implementations()) {
      const auto got = impl->table(spec, positions);
      for (std::size_t j = 0; j < got.size(); ++j) {
        const auto d = static_cast<std::size_t>(spec.d_model);
        const auto i = static_cast<double>(j % d / 2);
        double bound = units["fp64_angles"].get<double>();
        if (impl->angle_precision() == AnglePrecision::fp32) {  // the manifest's formula
          const double a = 2 * i * std::log(spec.base) / spec.d_model;
          bound = units["fp32_div_term_rounding"].get<double>() +
                  std::abs(static_cast<double>(positions[j / d])) * std::exp(-a) * (a + 1.5);
        }
        ASSERT_LE(std::abs(got[j] - want[j]) / 0x1p-23, bound)
            << impl->id() << " on " << c["name"] << " element " << j;
      }
    }
  }
}

// The fp16 cases are what the manifest says they are: '<f2' files of fp16 values, one case whose
// inputs all lie under fp16's smallest normal (subnormal outputs included, pairs under the floor),
// one whose outputs reach the top binade [32768, 65504] and stay finite, and a partial-rotary one.
TEST_F(Vectors, Fp16CasesCoverSubnormalsAndTheTopBinade) {
  EXPECT_NE(manifest()["conventions"]["fp16"].get<std::string>().find("'<f2'"), std::string::npos);
  int cases = 0, subnormal_cases = 0, top_binade_cases = 0, partial_cases = 0;
  for (const auto& c : manifest()["cases"]) {
    if (c["dtype"] != "fp16" || c["kind"] != "rope") continue;
    ++cases;
    const RopeSpec spec = spec_of(c);
    if (spec.rotary_dim < spec.head_dim) ++partial_cases;
    float max_in = 0, max_out = 0;
    std::size_t subnormal_out = 0, small_pairs = 0;
    for (const std::string tensor : {"q", "k"}) {
      for (const std::string& key : {tensor, tensor + "_expected_fp16"}) {
        EXPECT_EQ(c["files"][key]["descr"], "<f2") << c["name"] << "/" << key;
        EXPECT_EQ(file(c, key).descr, "<f2") << c["name"] << "/" << key;
      }
      const auto in = input(c, tensor);
      for (const float x : in) max_in = std::max(max_in, std::abs(x));
      for (std::size_t j = 0; j + 1 < in.size(); j += 2) {  // pair (0, 1) of any layout's rows
        if (std::hypot(in[j], in[j + 1]) < kFp16MinNormal) ++small_pairs;
      }
      for (const float y : widen(file(c, tensor + "_expected_fp16").as_float16())) {
        ASSERT_TRUE(std::isfinite(y)) << c["name"];
        max_out = std::max(max_out, std::abs(y));
        if (y != 0 && std::abs(y) < kFp16MinNormal) ++subnormal_out;
      }
    }
    if (max_in <= kFp16MinNormal) {
      ++subnormal_cases;
      EXPECT_GT(subnormal_out, 0u) << c["name"];
      EXPECT_GT(small_pairs, 0u) << c["name"] << ": the pair_norm_floor never binds";
    }
    if (max_out >= 32768.0f) ++top_binade_cases;
  }
  EXPECT_GE(cases, 4);
  EXPECT_GE(subnormal_cases, 1);
  EXPECT_GE(top_binade_cases, 1);
  EXPECT_GE(partial_cases, 1);
}

// (3) Every file's bytes are the documented .npy 1.0 layout, checked without the npy reader.
TEST_F(Vectors, NpyFilesHaveTheDocumentedBytes) {
  for (const auto& c : manifest()["cases"]) {
    for (const auto& [key, entry] : c["files"].items()) {
      const std::string bytes = slurp(root() / entry["path"].get<std::string>());
      ASSERT_GE(bytes.size(), 10u);
      EXPECT_EQ(bytes.substr(0, 6), std::string("\x93NUMPY"));
      EXPECT_EQ(bytes[6], '\x01');
      EXPECT_EQ(bytes[7], '\x00');
      const std::size_t length = static_cast<unsigned char>(bytes[8]) |
                                 static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8;
      ASSERT_EQ((10 + length) % 64, 0u) << entry["path"];
      const std::string header = bytes.substr(10, length);
      std::string shape;
      std::size_t elements = 1;
      for (const auto& d : entry["shape"]) {
        shape += (shape.empty() ? "" : ", ") + std::to_string(d.get<std::int64_t>());
        elements *= d.get<std::size_t>();
      }
      if (entry["shape"].size() == 1) shape += ",";
      const std::string dict = "{'descr': '" + entry["descr"].get<std::string>() +
                               "', 'fortran_order': False, 'shape': (" + shape + "), }";
      ASSERT_EQ(header.substr(0, dict.size()), dict) << entry["path"];
      EXPECT_EQ(header.back(), '\n');
      EXPECT_EQ(header.find_first_not_of(' ', dict.size()), length - 1) << "padding is spaces";
      const std::size_t element = static_cast<std::size_t>(entry["descr"].get<std::string>()[2] - '0');
      EXPECT_EQ(bytes.size(), 10 + length + elements * element) << entry["path"];
    }
  }
}

TEST_F(Vectors, RegeneratingGivesTheSameBytes) {
  const fs::path again = *dir_ / "again";
  std::ostringstream out;
  ASSERT_EQ(run_vectors(VectorsOptions{again}, out), kExitOk);
  for (const auto& entry : fs::recursive_directory_iterator(root())) {
    if (!entry.is_regular_file()) continue;
    ASSERT_EQ(slurp(entry.path()), slurp(again / fs::relative(entry.path(), root()))) << entry.path();
  }
}

// Inputs: on the 2^-22 grid in [-2, 2) (bf16-exact for bf16), deterministic, distinct per tensor.
TEST(GoldenInputs, DeterministicAndInRange) {
  const auto a = golden_inputs("case", "q", 1000, StorageType::fp32);
  EXPECT_EQ(a, golden_inputs("case", "q", 1000, StorageType::fp32));
  EXPECT_NE(a, golden_inputs("case", "k", 1000, StorageType::fp32));
  for (const float v : a) {
    ASSERT_GE(v, -2.0f);
    ASSERT_LT(v, 2.0f);
    ASSERT_EQ(std::ldexp(v, 22), std::round(std::ldexp(v, 22)));
  }
  for (const float v : golden_inputs("case", "q", 1000, StorageType::bf16)) {
    ASSERT_EQ(v, round_to_storage(v, StorageType::bf16));
  }
  // fp16: fp16 values; a scale moves them under 2^-14 (subnormal) or up to fp16's top binade.
  bool subnormal = false;
  for (const float v : golden_inputs("case", "q", 1000, StorageType::fp16, 0x1p-15f)) {
    ASSERT_EQ(v, round_to_storage(v, StorageType::fp16));
    ASSERT_LE(std::abs(v), 0x1p-14f);
    subnormal = subnormal || (v != 0 && std::abs(v) < 0x1p-14f);
  }
  EXPECT_TRUE(subnormal);
  for (const float v : golden_inputs("case", "q", 1000, StorageType::fp16, 0x1.6p14f)) {
    ASSERT_EQ(v, round_to_storage(v, StorageType::fp16));
    ASSERT_LE(std::abs(v), 45056.0f) << "pairs must stay under 65504 / sqrt(2) * sqrt(2)";
  }
}

// The *_expected_fp16 rounding: once, from the double. Through float first, a double just past
// an fp16 midpoint rounds to the midpoint and then ties to even, the wrong way.
TEST(Fp16FromDouble, RoundsOnceFromDouble) {
  const auto bits = [](double x) { return fp16_from_double(x).bits; };
  const auto via_float = [](double x) { return fp16_from_float(static_cast<float>(x)).bits; };
  // 1 + 2^-11 is the midpoint between 1 (0x3C00, even) and 1 + 2^-10 (0x3C01).
  const double just_above = 1 + 0x1p-11 + 0x1p-40;
  EXPECT_EQ(via_float(just_above), 0x3C00) << "the double rounding this guards against";
  EXPECT_EQ(bits(just_above), 0x3C01);
  EXPECT_EQ(bits(-just_above), 0xBC01);
  // 1 + 3 2^-11: midpoint between 0x3C01 and 0x3C02 (even); just below it is 0x3C01.
  const double just_below = 1 + 0x3p-11 - 0x1p-40;
  EXPECT_EQ(via_float(just_below), 0x3C02);
  EXPECT_EQ(bits(just_below), 0x3C01);
  // Exact ties still go to even.
  EXPECT_EQ(bits(1 + 0x1p-11), 0x3C00);
  EXPECT_EQ(bits(1 + 0x3p-11), 0x3C02);
  // Subnormals: 2^-25 is the tie between 0 and 2^-24 (0x0001).
  EXPECT_EQ(via_float(0x1p-25 + 0x1p-60), 0x0000);
  EXPECT_EQ(bits(0x1p-25 + 0x1p-60), 0x0001);
  EXPECT_EQ(bits(0x1p-25), 0x0000);
  EXPECT_EQ(bits(0x3p-25 - 0x1p-60), 0x0001);
  EXPECT_EQ(bits(0x3p-25), 0x0002);
  EXPECT_EQ(bits(-0x1p-30), 0x8000);
  EXPECT_EQ(bits(-0.0), 0x8000);
  EXPECT_EQ(bits(0.0), 0x0000);
  // Across the smallest normal: 2^-14 - 2^-25 is the tie between 0x03FF and 0x0400 (even).
  EXPECT_EQ(bits(0x1p-14 - 0x1p-25), 0x0400);
  EXPECT_EQ(bits(0x1p-14 - 0x1p-25 - 0x1p-60), 0x03FF);
  // Overflow: 65520 is the tie between 65504 (0x7BFF) and 65536 (Inf, "even").
  EXPECT_EQ(via_float(65520 - 0x1p-20), 0x7C00);
  EXPECT_EQ(bits(65520 - 0x1p-20), 0x7BFF);
  EXPECT_EQ(bits(65520), 0x7C00);
  EXPECT_EQ(bits(-1e300), 0xFC00);
  EXPECT_EQ(bits(std::numeric_limits<double>::infinity()), 0x7C00);
  EXPECT_GT(bits(std::numeric_limits<double>::quiet_NaN()) & 0x7FFF, 0x7C00);
  // And everywhere: random doubles from 2^-30 to 2^17, half of them pushed next to a midpoint.
  std::uint64_t state = 42;
  for (int n = 0; n < 200000; ++n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double unit = static_cast<double>(state >> 11) * 0x1p-53;  // [0, 1)
    double x = std::ldexp(1 + unit, static_cast<int>(state % 48) - 30);
    if (n % 2 == 1) {  // the nearest fp16 midpoint, nudged by a few double ulps either way
      const double spacing = std::ldexp(1.0, std::max(std::ilogb(x), -14) - 10);
      const double nudge = std::ldexp(static_cast<double>(n % 7) - 3, std::ilogb(x) - 52);
      x = (std::floor(x / spacing) + 0.5) * spacing + nudge;
    }
    if (n % 3 == 0) x = -x;
    ASSERT_TRUE(is_nearest_fp16(fp16_from_double(x), x)) << std::hexfloat << x;
  }
}

TEST(Npy, ReaderAndWriterReportBadFilesAndDirectories) {
  const ScratchDir dir("ropecheck_npy");
  const std::vector<float> values = {1.5f, -2.0f, 0.25f};
  const std::vector<std::int64_t> shape = {3};
  EXPECT_THROW(write_npy(dir / "missing" / "x.npy", values, shape), InvalidInput);
  const std::vector<std::int64_t> wrong_shape = {4};
  EXPECT_THROW(write_npy(dir / "x.npy", values, wrong_shape), InvalidInput);
  write_npy(dir / "x.npy", values, shape);
  const NpyArray back = read_npy(dir / "x.npy");
  EXPECT_EQ(back.shape, shape);
  EXPECT_EQ(back.as_float32(), values);
  EXPECT_THROW(back.as_float64(), InvalidInput);
  std::ofstream(dir / "not.npy") << "hello";
  EXPECT_THROW(read_npy(dir / "not.npy"), InvalidInput);
  EXPECT_THROW(read_npy(dir / "absent.npy"), InvalidInput);
}

// fp16 is written as NumPy's float16 ('<f2'), bit for bit, and is not readable as bf16 bits.
TEST(Npy, Fp16IsWrittenAsFloat16) {
  const ScratchDir dir("ropecheck_npy_fp16");
  // 1, -2^-24 (subnormal), 65504, 2^-14, -5
  const std::vector<Fp16> values = {{0x3C00}, {0x8001}, {0x7BFF}, {0x0400}, {0xC500}};
  const std::vector<std::int64_t> shape = {5};
  write_npy(dir / "h.npy", values, shape);
  EXPECT_NE(slurp(dir / "h.npy").find("{'descr': '<f2', "), std::string::npos);
  const NpyArray back = read_npy(dir / "h.npy");
  EXPECT_EQ(back.descr, "<f2");
  EXPECT_EQ(back.shape, shape);
  const auto halves = back.as_float16();
  ASSERT_EQ(halves.size(), values.size());
  for (std::size_t j = 0; j < values.size(); ++j) EXPECT_EQ(halves[j].bits, values[j].bits);
  EXPECT_EQ(widen(halves), (std::vector<float>{1.0f, -0x1p-24f, 65504.0f, 0x1p-14f, -5.0f}));
  EXPECT_THROW(back.as_uint16(), InvalidInput);
  const std::vector<std::uint16_t> bf16 = {0x3F80};
  const std::vector<std::int64_t> one = {1};
  write_npy(dir / "b.npy", bf16, one);
  EXPECT_THROW(read_npy(dir / "b.npy").as_float16(), InvalidInput);
}

// (4) The CLI: an --out that is a file, or under a file, is bad input (exit 2 with a message).
int cli(std::vector<std::string> args, std::string& out, std::string& err) {
  args.insert(args.begin(), "ropecheck");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream o, e;
  const int code = run_cli(static_cast<int>(argv.size()), argv.data(), o, e);
  out = o.str();
  err = e.str();
  return code;
}

TEST(VectorsCli, RefusesAnOutThatIsAFile) {
  const ScratchDir dir("ropecheck_vectors_cli");
  std::ofstream(dir / "file") << "not a directory";
  std::string out, err;
  EXPECT_EQ(cli({"vectors", "--out", (dir / "file").string()}, out, err), kExitUsage);
  EXPECT_NE(err.find("not a directory"), std::string::npos) << err;
  EXPECT_EQ(cli({"vectors", "--out", (dir / "file" / "sub").string()}, out, err), kExitUsage);
  EXPECT_NE(err.find("cannot create"), std::string::npos) << err;
  EXPECT_EQ(cli({"vectors"}, out, err), kExitUsage) << "--out is required";
  EXPECT_EQ(cli({"vectors", "--help"}, out, err), kExitOk);
  EXPECT_NE(out.find("--out"), std::string::npos) << out;
}

}  // namespace
}  // namespace ropecheck
