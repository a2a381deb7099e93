// The golden vectors (`ropecheck vectors`): regenerated into a temp dir, read back with the npy
// reader, and held to what the manifest promises: every real implementation within the
// manifest's tolerance, hand-computed values, the .npy bytes as documented, the CLI's refusals.
//   cmake --build build --target vectors_test && build/vectors_test;  ctest -L golden
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.h"
#include "golden_cases.h"
#include "ropecheck/errors.h"
#include "ropecheck/npy.h"
#include "ropecheck/registry.h"
#include "ropecheck/storage.h"
#include "test_config.h"
#include "test_process.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
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
  // q or k as floats: '<f4' as is, bf16 bit patterns widened (exactly).
  static std::vector<float> input(const Json& c, const std::string& key) {
    const NpyArray array = file(c, key);
    if (array.descr == kNpyFloat32) return array.as_float32();
    std::vector<float> widened;
    for (const auto bits : array.as_uint16()) widened.push_back(float_from_bf16(bits));
    return widened;
  }
  static RopeSpec spec_of(const Json& c) {
    const auto& s = c["spec"];
    return {s["head_dim"].get<int>(), s["rotary_dim"].get<int>(), s["base"].get<double>(),
            parse_layout(s["layout"].get<std::string>()),
            parse_angle_precision(s["angle_precision"].get<std::string>()), {}};
  }

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

TEST_F(Vectors, SummaryAndManifestListEveryCase) {
  const auto expected = golden_rope_cases().size() + golden_sinusoidal_cases().size();
  ASSERT_EQ(manifest()["cases"].size(), expected);
  EXPECT_EQ(manifest()["format"], "ropecheck.vectors/1");
  EXPECT_NE(summary_->find(std::to_string(expected) + " golden cases"), std::string::npos) << *summary_;
  std::uintmax_t bytes = 0;
  for (const auto& entry : fs::recursive_directory_iterator(root())) {
    if (entry.is_regular_file()) bytes += entry.file_size();
  }
  EXPECT_NE(summary_->find(std::to_string(bytes) + " bytes"), std::string::npos) << *summary_;
  EXPECT_LT(bytes, 4u << 20) << "the golden set is meant to stay small";
}

// (1) The manifest's tolerance, as a porter applies it, holds for every real implementation:
// fp32 cases on every fp32 implementation, bf16 cases on the bf16-storage ones (their fp32 entry
// point, with the bf16 inputs widened), in every angle precision each supports.
TEST_F(Vectors, EveryImplementationMeetsTheManifestTolerance) {
  for (const auto& c : manifest()["cases"]) {
    if (c["kind"] != "rope") continue;
    const RopeSpec golden = spec_of(c);
    const StorageType dtype = c["dtype"] == "bf16" ? StorageType::bf16 : StorageType::fp32;
    const auto& units = c["tolerance"]["rotation_bound_units"];
    const double flat = units["rounding"].get<double>() + units["storage"].get<double>();
    ASSERT_EQ(flat, units["fp64_angles"].get<double>()) << c["name"];
    const auto positions = file(c, "positions").as_int64();
    const auto theta = file(c, "theta").as_float64();
    const auto tokens = static_cast<std::int64_t>(positions.size());
    const auto q_in = input(c, "q"), k_in = input(c, "k");
    const auto q_want = file(c, "q_expected").as_float64(), k_want = file(c, "k_expected").as_float64();
    int checked = 0;
    for (const RopeImpl* impl : rope_implementations()) {
      const auto caps = impl->capabilities();
      if (!caps.available || caps.storage != dtype) continue;
      for (const AnglePrecision angles : caps.angle_precisions) {
        RopeSpec spec = golden;
        spec.angle_precision = angles;
        if (!caps.supports(spec)) continue;
        ++checked;
        auto q = q_in, k = k_in;
        impl->apply(spec, HeadTensor{q, tokens, c["q_heads"].get<std::int64_t>(), spec.head_dim},
                    HeadTensor{k, tokens, c["kv_heads"].get<std::int64_t>(), spec.head_dim},
                    positions);
        double worst = 0;
        const auto q_heads = c["q_heads"].get<std::size_t>(), kv_heads = c["kv_heads"].get<std::size_t>();
        for (const auto& [got, in, want, heads] :
             {std::tuple{&q, &q_in, &q_want, q_heads}, {&k, &k_in, &k_want, kv_heads}}) {
          for (std::size_t j = 0; j < got->size(); ++j) {
            const auto f = static_cast<int>(j % static_cast<std::size_t>(spec.head_dim));
            const std::size_t row = j - static_cast<std::size_t>(f);
            if (f >= spec.rotary_dim) {
              ASSERT_EQ((*got)[j], (*in)[j]) << impl->id() << " changed the tail of " << c["name"];
              continue;
            }
            const Pair p = pair_of(spec, f);
            const std::int64_t m = positions[j / (heads * static_cast<std::size_t>(spec.head_dim))];
            double bound = flat;
            if (angles == AnglePrecision::fp32) {
              const double theta_i = theta[static_cast<std::size_t>(p.i)];
              const auto& per_radian = units["fp32_angles_per_radian"];
              bound += (per_radian["per_abs_ln_theta"].get<double>() * std::abs(std::log(theta_i)) +
                        per_radian["constant"].get<double>()) *
                       std::abs(static_cast<double>(m) * theta_i);
            }
            const double pair = std::hypot((*in)[row + static_cast<std::size_t>(p.a)],
                                           (*in)[row + static_cast<std::size_t>(p.b)]);
            const double err = std::abs((*got)[j] - (*want)[j]) / (0x1p-23 * pair);
            worst = std::max(worst, err / bound);
            ASSERT_LE(err, bound) << impl->id() << " on " << c["name"] << " (" << to_string(angles)
                                  << " angles), element " << j << ", position " << m;
          }
        }
        RecordProperty(std::string(impl->id()) + "/" + c["name"].get<std::string>(), std::to_string(worst));
      }
    }
    EXPECT_GE(checked, dtype == StorageType::fp32 ? 3 : 1) << c["name"] << ": too few implementations checked";
  }
}

// The convenience files are the float64 expected rounded once to the case's dtype.
TEST_F(Vectors, RoundedExpectedIsTheExpectedRoundedOnce) {
  for (const auto& c : manifest()["cases"]) {
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

// (2) Values derived by hand from the spec, independently of the oracle.
TEST_F(Vectors, HandComputedValues) {
  int zero_positions = 0;
  for (const auto& c : manifest()["cases"]) {
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
        // Pair 0 rotates by theta_0 = 1: by m radians.
        const long double m = static_cast<long double>(positions[t]);
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
  for (const auto& c : manifest()["cases"]) {
    if (c["kind"] != "rope") continue;
    const auto& units = c["tolerance"]["rotation_bound_units"];
    const double storage = c["dtype"] == "bf16" ? 0x1p15 * (1 + 0x1p-22) : 0.0;  // 2^-8 / 2^-23 ...
    EXPECT_EQ(units["rounding"].get<double>(), 2.0);
    EXPECT_EQ(units["storage"].get<double>(), storage);
    EXPECT_EQ(units["fp64_angles"].get<double>(), 2.0 + storage);
    EXPECT_EQ(units["fp32_angles_per_radian"]["per_abs_ln_theta"].get<double>(), 0.5);
    EXPECT_EQ(units["fp32_angles_per_radian"]["constant"].get<double>(), 3.5);
    EXPECT_FALSE(c["tolerance"]["derivation"].empty());
  }
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
