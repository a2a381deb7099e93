// `ropecheck check --vectors DIR --outputs OUT` through run_cli, as a porter runs it: the oracle's
// outputs rounded once to each case's storage (the ideal port) pass every case; one element
// pushed past its bound fails that case and no other, above 1x its bound; NaN, a changed tail and
// fp32-angle ports; MISSING cases with and without --only-present; exit 2 naming the file for
// every kind of bad input; a version-1 manifest still judged.
//   cmake --build build --target vectors_tests && build/tests/vectors_tests --gtest_filter='Check*'
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_app.h"
#include "core/exit_codes.h"
#include "core/storage.h"
#include "tests/support/in_process_cli.h"
#include "tests/support/test_process.h"
#include "vectors/check.h"
#include "vectors/golden_cases.h"
#include "vectors/manifest_reader.h"
#include "vectors/npy.h"
#include "vectors/vectors.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using test::ScratchDir;
using test::slurp;

using Cli = test::CliRun;

Cli cli(std::vector<std::string> args) { return test::run_in_process(std::move(args)); }

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The golden vectors, written once; each test writes its own outputs directory.
class Check : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir("ropecheck_check");
    std::ostringstream out;
    ASSERT_EQ(run_vectors(VectorsOptions{vectors()}, out), kExitOk);
    manifest_ = new Manifest(read_manifest(vectors()));
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete manifest_;
  }
  static fs::path vectors() { return *dir_ / "golden"; }
  static const Manifest& manifest() { return *manifest_; }
  static const ManifestCase& case_named(const std::string& name) {
    for (const auto& c : manifest().cases) {
      if (c.name == name) return c;
    }
    throw std::runtime_error("no case " + name);
  }

  // The ideal port: every case's *_expected_<dtype>.npy (the float64 oracle rounded once to the
  // case's storage) copied to OUT/<case>/<tensor>_out.npy.
  static void write_ideal_outputs(const fs::path& out, const std::string& kind = "rope") {
    for (const auto& c : manifest().cases) {
      if (c.kind != kind) continue;
      fs::create_directories(out / c.name);
      const std::string dtype(to_string(c.dtype));
      for (const std::string& tensor : kind == "rope" ? std::vector<std::string>{"q", "k"}
                                                      : std::vector<std::string>{"pe"}) {
        fs::copy_file(c.file(tensor + "_expected_" + dtype).path, out / c.name / (tensor + "_out.npy"),
                      fs::copy_options::overwrite_existing);
      }
    }
  }

  // Overwrites element j of OUT/<case>/<tensor>_out.npy with `value` rounded to the case's storage.
  static void set_output(const fs::path& out, const ManifestCase& c, const std::string& tensor,
                         std::size_t j, float value) {
    const fs::path path = out / c.name / (tensor + "_out.npy");
    const NpyArray array = read_npy(path);
    const std::vector<std::int64_t>& shape = array.shape;
    if (array.descr == kNpyFloat32) {
      auto v = array.as_float32();
      v[j] = value;
      write_npy(path, v, shape);
    } else if (array.descr == kNpyFloat16) {
      auto v = array.as_float16();
      v[j] = fp16_from_float(value);
      write_npy(path, v, shape);
    } else {
      auto v = array.as_uint16();
      v[j] = bf16_from_float(value);
      write_npy(path, v, shape);
    }
  }

  static ScratchDir* dir_;
  static Manifest* manifest_;
};

ScratchDir* Check::dir_ = nullptr;
Manifest* Check::manifest_ = nullptr;

CheckOptions options(const fs::path& vectors, const fs::path& out) {
  CheckOptions o;
  o.vectors_dir = vectors;
  o.outputs_dir = out;
  return o;
}

std::vector<std::string> check_args(const fs::path& vectors, const fs::path& out) {
  return {"check", "--vectors", vectors.string(), "--outputs", out.string()};
}

TEST_F(Check, TheIdealPortPassesEveryCase) {
  const ScratchDir out("ropecheck_check_out");
  write_ideal_outputs(out.path());
  const Cli run = cli(check_args(vectors(), out.path()));
  EXPECT_EQ(run.code, kExitOk) << run.out << run.err;
  const auto rope_cases = golden_rope_cases().size();
  EXPECT_TRUE(contains(run.out, fmt::format("check: {} rope cases, {} passed, 0 failed, 0 missing",
                                            rope_cases, rope_cases))) << run.out;
  EXPECT_FALSE(contains(run.out, "FAIL")) << run.out;
  EXPECT_FALSE(contains(run.out, "MISSING")) << run.out;
  for (const auto& c : golden_rope_cases()) EXPECT_TRUE(contains(run.out, c.name)) << c.name;
  // The worst of an ideal port is half an ulp of the storage: for fp32 2^-24 a |p| against the
  // bound 2a eps32 |p|, a quarter; for bf16 and fp16 up to nearly the whole storage term.
  for (const CaseCheck& row : check_outputs(options(vectors(), out.path())).cases) {
    EXPECT_EQ(row.verdict, CheckVerdict::pass) << row.name;
    if (row.dtype == "fp32") {
      EXPECT_LE(row.worst.ratio, 0.25 * (1 + 0x1p-20)) << row.name << ": " << row.worst.where;
    }
  }
}

TEST_F(Check, SinusoidalCasesAreJudgedWithKindSinusoidal) {
  const ScratchDir out("ropecheck_check_pe");
  write_ideal_outputs(out.path(), "sinusoidal");
  const Cli run = cli({"check", "--vectors", vectors().string(), "--outputs", out.str(), "--kind", "sinusoidal"});
  EXPECT_EQ(run.code, kExitOk) << run.out << run.err;
  EXPECT_TRUE(contains(run.out, "3 sinusoidal cases, 3 passed")) << run.out;
  const ManifestCase& c = case_named("sinusoidal_d64_b1e4_gapped");
  set_output(out.path(), c, "pe", 7, 0.5f);
  const Cli failed = cli({"check", "--vectors", vectors().string(), "--outputs", out.str(), "--kind", "sinusoidal"});
  EXPECT_EQ(failed.code, kExitFailed) << failed.out;
  EXPECT_TRUE(contains(failed.out, "pe position 0 feature 7")) << failed.out;
}

// One element moved by 4 bounds (then rounded to the storage, which can take back at most the
// storage's half ulp, under one bound) fails its case and only its case, above 1x its bound.
TEST_F(Check, APerturbedElementFailsItsCaseAboveItsBound) {
  for (const std::string name : {"yarn_f4_d128_half_split_b1e6_qwen25_7b",
                                 "bf16_longrope_d128_half_split_r96_b1e4_phi4_mini_long",
                                 "fp16_dynamic_ntk_f4_d128_half_split_b5e5_above_switch",
                                 "d64_interleaved_b1e4_prefill"}) {
    SCOPED_TRACE(name);
    const ScratchDir out("ropecheck_check_perturbed");
    write_ideal_outputs(out.path());
    const ManifestCase& c = case_named(name);
    const auto input = read_npy(c.file("k").path).stored_as_float32();
    const auto expected = read_npy(c.file("k_expected").path).as_float64();
    const auto positions = read_npy(c.file("positions").path).as_int64();
    const auto theta = read_npy(c.file("theta").path).as_float64();
    // Token 1, head 0, feature 1: in pair 0 interleaved (features 0, 1), in pair 1 half-split
    // (features 1, 1 + rotary_dim/2).
    const auto dim = static_cast<std::size_t>(c.rope_spec.head_dim);
    const std::size_t row = static_cast<std::size_t>(c.kv_heads) * dim, j = row + 1;
    const bool interleaved = c.rope_spec.layout == Layout::interleaved;
    const std::size_t partner = interleaved ? row : row + 1 + static_cast<std::size_t>(c.rope_spec.rotary_dim / 2);
    const double pair = std::hypot(static_cast<double>(input[j]), static_cast<double>(input[partner]));
    const double bound = c.rope_tolerance.bound_units(AnglePrecision::fp64, positions[1], theta[interleaved ? 0 : 1], interleaved ? 0 : 1);
    const double unit = 0x1p-23 * c.rope_tolerance.unit_pair_norm(pair);
    set_output(out.path(), c, "k", j, static_cast<float>(expected[j] + 4 * bound * unit));
    const Cli run = cli(check_args(vectors(), out.path()));
    EXPECT_EQ(run.code, kExitFailed) << run.out << run.err;
    EXPECT_TRUE(contains(run.out, "1 failed")) << run.out;
    EXPECT_TRUE(contains(run.out, "worst: k token 1 head 0 feature 1")) << run.out;
    for (const CaseCheck& row_check : check_outputs(options(vectors(), out.path())).cases) {
      if (row_check.name != name) {
        EXPECT_EQ(row_check.verdict, CheckVerdict::pass) << row_check.name;
        continue;
      }
      EXPECT_EQ(row_check.verdict, CheckVerdict::fail);
      // 4 bounds, give or take the storage's half ulp (at most about one bound for bf16 and fp16).
      EXPECT_GT(row_check.worst.ratio, 2.5) << row_check.worst.where;
      EXPECT_LT(row_check.worst.ratio, 5.5) << row_check.worst.where;
    }
  }
}

// An error that grows with |m theta| is a failure for a port that claims fp64 angles and within
// the fp32-angle term for one that declares fp32: the same outputs, two verdicts.
TEST_F(Check, Fp32AnglesAreHeldToTheBoundThatGrowsWithPosition) {
  const ScratchDir out("ropecheck_check_angles");
  write_ideal_outputs(out.path());
  const ManifestCase& c = case_named("d128_half_split_b5e5_llama3_8b_decode_131071");
  const auto input = read_npy(c.file("q").path).stored_as_float32();
  const auto expected = read_npy(c.file("q_expected").path).as_float64();
  // Pair 0 (features 0 and 64) at position 131071, theta 1: rotate it by 2^-20 radians more,
  // 2^3 = 8 units of eps32 * |p|: 4 fp64 bounds, far inside 3.5 * 131071 units.
  const double delta = 0x1p-20, x_a = input[0], x_b = input[64];
  const double y_a = expected[0] * std::cos(delta) - expected[64] * std::sin(delta);
  const double y_b = expected[0] * std::sin(delta) + expected[64] * std::cos(delta);
  ASSERT_GT(std::hypot(x_a, x_b), 0.1);
  set_output(out.path(), c, "q", 0, static_cast<float>(y_a));
  set_output(out.path(), c, "q", 64, static_cast<float>(y_b));
  const Cli fp64 = cli(check_args(vectors(), out.path()));
  EXPECT_EQ(fp64.code, kExitFailed) << fp64.out;
  EXPECT_TRUE(contains(fp64.out, "declares --angles fp32")) << fp64.out;
  auto args = check_args(vectors(), out.path());
  args.insert(args.end(), {"--angles", "fp32"});
  const Cli fp32 = cli(args);
  EXPECT_EQ(fp32.code, kExitOk) << fp32.out << fp32.err;
  EXPECT_TRUE(contains(fp32.out, "fp32 angles")) << fp32.out;
}

TEST_F(Check, NanAndAChangedTailFail) {
  const ScratchDir out("ropecheck_check_nan");
  write_ideal_outputs(out.path());
  const ManifestCase& nan_case = case_named("llama3_f8_d128_half_split_b5e5_llama31_8b");
  set_output(out.path(), nan_case, "q", 3, std::numeric_limits<float>::quiet_NaN());
  // Feature 100 of 128 lies past rotary_dim 96: it must come back bit for bit.
  const ManifestCase& tail_case = case_named("bf16_longrope_d128_half_split_r96_b1e4_phi4_mini_short");
  const auto tail_input = read_npy(tail_case.file("q").path).stored_as_float32();
  set_output(out.path(), tail_case, "q", 100, tail_input[100] + 0.5f);  // inputs lie in [-2, 2)
  const CheckReport report = check_outputs(options(vectors(), out.path()));
  EXPECT_EQ(report.failed, 2);
  EXPECT_EQ(report.exit_code(), kExitFailed);
  for (const CaseCheck& row : report.cases) {
    if (row.name == nan_case.name || row.name == tail_case.name) {
      EXPECT_EQ(row.verdict, CheckVerdict::fail) << row.name;
      EXPECT_TRUE(std::isinf(row.worst.ratio)) << row.name << ": " << row.worst.where;
    }
  }
  const Cli run = cli(check_args(vectors(), out.path()));
  EXPECT_TRUE(contains(run.out, "past rotary_dim 96, must pass through bit for bit")) << run.out;
  EXPECT_TRUE(contains(run.out, "got nan")) << run.out;
}

TEST_F(Check, AMissingCaseIsReportedAndFailsUnlessOnlyPresent) {
  const ScratchDir out("ropecheck_check_missing");
  write_ideal_outputs(out.path());
  const std::string gone = "longrope_d96_half_split_b1e4_phi3_mini_boundary";
  fs::remove_all(out / gone);
  const Cli run = cli(check_args(vectors(), out.path()));
  EXPECT_EQ(run.code, kExitFailed) << run.out << run.err;
  EXPECT_TRUE(contains(run.out, "MISSING")) << run.out;
  EXPECT_TRUE(contains(run.out, "not found: " + gone + "/q_out.npy, " + gone + "/k_out.npy")) << run.out;
  EXPECT_TRUE(contains(run.out, "0 failed, 1 missing")) << run.out;

  auto only_present = check_args(vectors(), out.path());
  only_present.push_back("--only-present");
  const Cli excused = cli(only_present);
  EXPECT_EQ(excused.code, kExitOk) << excused.out << excused.err;
  EXPECT_TRUE(contains(excused.out, "(not counted: --only-present)")) << excused.out;
  EXPECT_TRUE(contains(excused.out, "0 missing (1 more not counted: --only-present)")) << excused.out;

  // Half a case is a failure even with --only-present: the port meant to write it.
  const std::string half = "yarn_f40_d64_interleaved_b1e4_deepseek_v3";
  fs::remove(out / half / "k_out.npy");
  const Cli partial = cli(only_present);
  EXPECT_EQ(partial.code, kExitFailed) << partial.out;
  EXPECT_TRUE(contains(partial.out, "not found: " + half + "/k_out.npy\n")) << partial.out;
}

TEST_F(Check, BadInputExits2NamingTheFile) {
  const ScratchDir scratch("ropecheck_check_bad");
  const fs::path out = scratch / "out";
  const ManifestCase& c = case_named("d64_half_split_b1e4_prefill");
  const auto run_expect_2 = [&](const std::vector<std::string>& args, const std::vector<std::string>& mentions) {
    const Cli run = cli(args);
    EXPECT_EQ(run.code, kExitUsage) << run.out << run.err;
    EXPECT_TRUE(run.out.empty() || !contains(run.out, "PASS")) << "no verdict on bad input:\n" << run.out;
    for (const auto& m : mentions) EXPECT_TRUE(contains(run.err, m)) << "stderr lacks '" << m << "':\n" << run.err;
  };
  // Directories: missing vectors, missing outputs, an outputs directory with nothing in it.
  run_expect_2(check_args(scratch / "no_vectors", out), {"--vectors", "no_vectors", "not a directory"});
  run_expect_2(check_args(vectors(), scratch / "no_outputs"), {"--outputs", "no_outputs", "not a directory"});
  fs::create_directories(out);
  run_expect_2(check_args(vectors(), out), {"no output of any rope case", "q_out.npy"});
  run_expect_2({"check", "--outputs", out.string()}, {"--vectors"});
  // Outputs of the wrong dtype, the wrong shape, not .npy at all.
  write_ideal_outputs(out);
  const fs::path q_out = out / c.name / "q_out.npy";
  const auto expected = read_npy(c.file("q_expected").path);
  write_npy(q_out, expected.as_float64(), expected.shape);
  run_expect_2(check_args(vectors(), out), {q_out.string(), "dtype '<f8', expected '<f4' (fp32, as q.npy)"});
  const auto values = read_npy(c.file("q_expected_fp32").path).as_float32();
  const std::vector<std::int64_t> flat = {static_cast<std::int64_t>(values.size())};
  write_npy(q_out, values, flat);
  run_expect_2(check_args(vectors(), out), {q_out.string(), "shape (" + std::to_string(values.size()) + ")",
                                            "expected (8, 8, 64)"});
  std::ofstream(q_out) << "not an npy file";
  run_expect_2(check_args(vectors(), out), {q_out.string(), "not a .npy file"});
  write_ideal_outputs(out);
  // Vectors whose own files disagree with their manifest (a truncated expected file): no crash.
  const fs::path copy = scratch / "golden_copy";
  fs::copy(vectors(), copy, fs::copy_options::recursive);
  const fs::path q_expected = copy / c.name / "q_expected.npy";
  const auto exact = read_npy(q_expected).as_float64();
  const std::vector<double> fewer(exact.begin(), exact.begin() + 10);
  const std::vector<std::int64_t> ten = {10};
  write_npy(q_expected, fewer, ten);
  run_expect_2(check_args(copy, out), {q_expected.string(), "10 elements"});
  // A manifest that is not JSON, or of another format.
  std::ofstream(copy / "manifest.json") << "{ not json";
  run_expect_2(check_args(copy, out), {(copy / "manifest.json").string(), "not JSON"});
  std::ofstream(copy / "manifest.json") << R"({"format": "ropecheck.vectors/9", "cases": []})";
  run_expect_2(check_args(copy, out), {"ropecheck.vectors/9"});
  // And bad options.
  run_expect_2({"check", "--vectors", vectors().string(), "--outputs", out.string(), "--angles", "fp16"}, {"--angles"});
}

// DeepSeek's mscale keys in a manifest: a negative or non-numeric one exits 2 naming the case
// (JSON has no NaN); without them, as a ropecheck before them reads the case, it is judged alike:
// its expected values and its tolerance's attention factor are in the files.
TEST_F(Check, MscaleKeysOfTheManifest) {
  const std::string name = "yarn_f40_d64_interleaved_b1e4_mscale_ratio";
  const ScratchDir scratch("ropecheck_check_mscale");
  const fs::path copy = scratch / "golden";
  fs::copy(vectors(), copy, fs::copy_options::recursive);
  const Json original = Json::parse(slurp(copy / "manifest.json"));
  const auto write_edited = [&](const auto& edit) {
    Json json = original;
    for (Json& c : json["cases"]) {
      if (c["name"] == name) edit(c["spec"]["scaling"]);
    }
    std::ofstream(copy / "manifest.json") << json.dump(2);
  };
  const ScratchDir out("ropecheck_check_mscale_out");
  write_ideal_outputs(out.path());
  write_edited([](Json& scaling) { scaling["mscale_all_dim"] = -1.0; });
  Cli run = cli(check_args(copy, out.path()));
  EXPECT_EQ(run.code, kExitUsage) << run.out << run.err;
  EXPECT_TRUE(contains(run.err, "case " + name + ": yarn mscale_all_dim must be finite and >= 0, got -1"))
      << run.err;
  write_edited([](Json& scaling) { scaling["mscale_all_dim"] = "0.707"; });
  run = cli(check_args(copy, out.path()));
  EXPECT_EQ(run.code, kExitUsage) << run.out << run.err;
  EXPECT_TRUE(contains(run.err, name)) << run.err;
  write_edited([](Json& scaling) {
    scaling.erase("mscale");
    scaling.erase("mscale_all_dim");
  });
  run = cli(check_args(copy, out.path()));
  EXPECT_EQ(run.code, kExitOk) << run.out << run.err;
}

// A manifest of format 1 (an older ropecheck's vectors: no scaling, no new tolerance fields) is
// judged the same way.
TEST_F(Check, AVersion1ManifestIsStillJudged) {
  const ScratchDir scratch("ropecheck_check_v1");
  const fs::path v1 = scratch / "golden_v1";
  fs::copy(vectors(), v1, fs::copy_options::recursive);
  Json json = Json::parse(slurp(v1 / "manifest.json"));
  json["format"] = "ropecheck.vectors/1";
  Json cases = Json::array();
  for (Json c : json["cases"]) {
    if (c["kind"] != "rope" || c["spec"]["scaling"]["kind"] != "none") continue;
    if (c["spec"]["axes"]["mode"] != "none") continue;  // multi-axis cases came with format 3
    c["spec"].erase("scaling");
    c["spec"].erase("axes");
    c.erase("outputs");
    auto& units = c["tolerance"]["rotation_bound_units"];
    units.erase("attention_factor");
    units.erase("fp32_attention_scaling");
    units["fp32_angles_per_radian"].erase("blend");
    cases.push_back(c);
  }
  json["cases"] = cases;
  std::ofstream(v1 / "manifest.json") << json.dump(2);
  const ScratchDir out("ropecheck_check_v1_out");
  write_ideal_outputs(out.path());
  const Cli run = cli(check_args(v1, out.path()));
  EXPECT_EQ(run.code, kExitOk) << run.out << run.err;
  EXPECT_TRUE(contains(run.out, fmt::format("check: {} rope cases, {} passed", cases.size(), cases.size())))
      << run.out;
}

TEST(CheckCli, HelpNamesTheOutputFilesAndExitCodes) {
  const Cli run = cli({"check", "--help"});
  EXPECT_EQ(run.code, kExitOk);
  for (const std::string part : {"--vectors", "--outputs", "q_out.npy", "k_out.npy", "--only-present",
                                 "--angles", "Exit: 0", "MISSING"}) {
    EXPECT_TRUE(contains(run.out, part)) << part << " not in:\n" << run.out;
  }
}

}  // namespace
}  // namespace ropecheck
