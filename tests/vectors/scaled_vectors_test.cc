// The frequency-scaled golden cases (vectors/scaled_golden_cases.cc) and what the manifest says of
// them: every kind on both sides of its switch in fp32 and in a 16-bit storage, the sequence
// length HF reads, the spec and tolerance read back exactly (manifest_reader.h), the HF mapping and
// the convention notes. Their expected values are recomputed independently, from the manifest and
// the .npy files alone, by recompute_scaled_vectors.py (ctest -R vectors_recompute).
//   cmake --build build --target vectors_tests
//   build/tests/vectors_tests --gtest_filter='Scaled*:ScalingJson*'
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include "core/errors.h"
#include "core/exit_codes.h"
#include "core/frequency.h"
#include "core/tolerance.h"
#include "tests/support/test_process.h"
#include "vectors/golden_cases.h"
#include "vectors/manifest.h"
#include "vectors/manifest_reader.h"
#include "vectors/npy.h"
#include "vectors/vectors.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using test::ScratchDir;
using test::slurp;

class ScaledVectors : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir("ropecheck_scaled_vectors");
    std::ostringstream out;
    ASSERT_EQ(run_vectors(VectorsOptions{dir_->path()}, out), kExitOk);
    json_ = new Json(Json::parse(slurp(*dir_ / "manifest.json")));
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete json_;
  }
  static const Json& json() { return *json_; }
  static fs::path root() { return dir_->path(); }
  static const GoldenRopeCase& golden(const std::string& name) {
    for (const auto& c : golden_rope_cases()) {
      if (c.name == name) return c;
    }
    throw std::runtime_error("no golden case " + name);
  }

  static ScratchDir* dir_;
  static Json* json_;
};

ScratchDir* ScaledVectors::dir_ = nullptr;
Json* ScaledVectors::json_ = nullptr;

bool is_scaled(const GoldenRopeCase& c) { return c.spec.scaling.kind != ScalingKind::none; }

std::int64_t max_position_plus_one(const GoldenRopeCase& c) {
  return *std::max_element(c.positions.begin(), c.positions.end()) + 1;
}

// Which side of its switch a case is on: dynamic NTK and LongRoPE switch at L' > L.
std::string side_of(const RopeScaling& s) {
  if (s.kind != ScalingKind::dynamic_ntk && s.kind != ScalingKind::longrope) return "-";
  return s.sequence_length > s.original_max_position ? "above" : "below";
}

TEST(ScaledGoldenCases, EveryKindOnBothSidesOfItsSwitchInFp32AndA16BitStorage) {
  std::set<std::tuple<ScalingKind, std::string, bool>> covered;  // kind, side, 16-bit
  bool yarn_attention_on_cos_sin = false;
  for (const auto& c : golden_rope_cases()) {
    if (!is_scaled(c)) continue;
    covered.insert({c.spec.scaling.kind, side_of(c.spec.scaling), c.dtype != StorageType::fp32});
    if (c.spec.scaling.kind == ScalingKind::yarn && c.dtype == StorageType::fp32) {
      yarn_attention_on_cos_sin = yarn_attention_on_cos_sin || attention_factor(c.spec) > 1.0;
    }
  }
  for (const bool sixteen_bit : {false, true}) {
    for (const ScalingKind kind : {ScalingKind::linear, ScalingKind::ntk, ScalingKind::yarn, ScalingKind::llama3}) {
      EXPECT_TRUE(covered.count({kind, "-", sixteen_bit})) << to_string(kind) << (sixteen_bit ? " 16-bit" : " fp32");
    }
    for (const ScalingKind kind : {ScalingKind::dynamic_ntk, ScalingKind::longrope}) {
      for (const std::string side : {"below", "above"}) {
        EXPECT_TRUE(covered.count({kind, side, sixteen_bit}))
            << to_string(kind) << " " << side << (sixteen_bit ? " 16-bit" : " fp32");
      }
    }
  }
  EXPECT_TRUE(yarn_attention_on_cos_sin) << "an fp32 YaRN case with an attention factor above 1";
}

// HF transformers reads the current length as max(position_ids) + 1: the cases' positions say
// the same as their sequence_length, so a port reading either gets the case's table.
TEST(ScaledGoldenCases, SequenceLengthIsTheLastPositionPlusOne) {
  int switching = 0;
  for (const auto& c : golden_rope_cases()) {
    const RopeScaling& s = c.spec.scaling;
    if (s.kind != ScalingKind::dynamic_ntk && s.kind != ScalingKind::longrope) continue;
    ++switching;
    EXPECT_EQ(s.sequence_length, max_position_plus_one(c)) << c.name;
  }
  EXPECT_GE(switching, 8);
}

TEST_F(ScaledVectors, ManifestSpecsReadBackExactly) {
  const Manifest manifest = read_manifest(root());
  EXPECT_EQ(manifest.format, kVectorsFormat);
  int rope = 0;
  for (std::size_t i = 0; i < manifest.cases.size(); ++i) {
    const ManifestCase& c = manifest.cases[i];
    const Json& entry = json()["cases"][i];
    ASSERT_EQ(c.name, entry["name"]);
    if (c.kind != "rope") continue;
    ++rope;
    const GoldenRopeCase& g = golden(c.name);
    EXPECT_EQ(c.rope_spec.head_dim, g.spec.head_dim);
    EXPECT_EQ(c.rope_spec.rotary_dim, g.spec.rotary_dim);
    EXPECT_EQ(c.rope_spec.base, g.spec.base);
    EXPECT_EQ(c.rope_spec.layout, g.spec.layout);
    EXPECT_EQ(c.rope_spec.angle_precision, g.spec.angle_precision);
    EXPECT_TRUE(c.rope_spec.scaling == g.spec.scaling) << c.name << ": " << describe(c.rope_spec.scaling);
    EXPECT_EQ(c.dtype, g.dtype);
    EXPECT_EQ(c.q_heads, g.q_heads);
    EXPECT_EQ(c.kv_heads, g.kv_heads);
    EXPECT_EQ(c.rope_spec.axes, g.spec.axes) << c.name;
    EXPECT_EQ(c.tokens, golden_tokens(g));
    EXPECT_EQ(read_npy(c.file("positions").path).as_int64(), g.positions);
    // And the JSON a reader writes back is the JSON it read.
    EXPECT_EQ(rope_spec_json(c.rope_spec), entry["spec"]) << c.name;
  }
  EXPECT_EQ(rope, static_cast<int>(golden_rope_cases().size()));
}

// Every kind with every parameter it reads away from its default (the others at theirs, as the
// manifest leaves them out), and an attention override: read back equal.
RopeScaling non_default(ScalingKind kind) {
  RopeScaling s;
  s.kind = kind;
  s.attention_factor = 0.875;
  if (kind == ScalingKind::none) return s;
  s.factor = 6.5;
  if (kind == ScalingKind::linear || kind == ScalingKind::ntk) return s;
  s.original_max_position = 3000;
  switch (kind) {
    case ScalingKind::dynamic_ntk:
      s.sequence_length = 3001;
      break;
    case ScalingKind::yarn:
      s.beta_fast = 24.0;
      s.beta_slow = 2.0;
      s.truncate = false;
      s.mscale = 0.75;
      s.mscale_all_dim = 1.25;
      break;
    case ScalingKind::llama3:
      s.low_freq_factor = 1.5;
      s.high_freq_factor = 3.25;
      break;
    case ScalingKind::longrope:
      s.sequence_length = 3001;
      s.short_factor = {1.0, 1.25};
      s.long_factor = {3.5, 7.0};
      break;
    default:
      break;
  }
  return s;
}

TEST(ScalingJson, EveryKindRoundTrips) {
  for (const ScalingKind kind : kAllScalingKinds) {
    const RopeScaling s = non_default(kind);
    EXPECT_TRUE(scaling_from_json(scaling_json(s)) == s) << describe(s);
    const RopeSpec spec{4, 4, 1e4, Layout::half_split, AnglePrecision::fp32, s, {}};
    const RopeSpec back = rope_spec_from_json(rope_spec_json(spec));
    EXPECT_TRUE(back.scaling == spec.scaling) << describe(s);
    EXPECT_EQ(back.angle_precision, AnglePrecision::fp32);
    EXPECT_EQ(back.layout, Layout::half_split);
  }
}

// DeepSeek's keys are optional: a yarn scaling without them (every manifest before them) or with
// null reads as unset, HF's default attention factor; one alone is written and read alone.
TEST(ScalingJson, YarnMscaleKeysAreOptional) {
  RopeScaling s;
  s.kind = ScalingKind::yarn;
  s.factor = 40;
  s.original_max_position = 4096;
  Json j = scaling_json(s);
  EXPECT_FALSE(j.contains("mscale")) << j.dump();
  EXPECT_FALSE(j.contains("mscale_all_dim")) << j.dump();
  EXPECT_TRUE(scaling_from_json(j) == s);
  j["mscale"] = nullptr;
  j["mscale_all_dim"] = nullptr;
  EXPECT_TRUE(scaling_from_json(j) == s);
  j["mscale"] = 0.707;
  j.erase("mscale_all_dim");
  const RopeScaling alone = scaling_from_json(j);
  EXPECT_EQ(alone.mscale, 0.707);
  EXPECT_FALSE(alone.mscale_all_dim.has_value());
  EXPECT_EQ(scaling_json(alone)["mscale"], 0.707);
  EXPECT_FALSE(scaling_json(alone).contains("mscale_all_dim"));
  j["mscale_all_dim"] = 1.0;
  const RopeScaling both = scaling_from_json(j);
  EXPECT_EQ(both.mscale, 0.707);
  EXPECT_EQ(both.mscale_all_dim, 1.0);
}

// A negative or non-numeric mscale is refused with the key's name (check then exits 2).
TEST(ScalingJson, BadMscaleIsInvalidInput) {
  RopeScaling s;
  s.kind = ScalingKind::yarn;
  s.factor = 40;
  s.original_max_position = 4096;
  Json spec = rope_spec_json(RopeSpec{64, 64, 1e4, Layout::interleaved, AnglePrecision::fp64, s, {}});
  spec["scaling"]["mscale"] = 1.0;
  spec["scaling"]["mscale_all_dim"] = -0.707;
  try {
    rope_spec_from_json(spec);
    ADD_FAILURE() << "a negative mscale_all_dim was accepted";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("yarn mscale_all_dim must be finite and >= 0, got -0.707"),
              std::string::npos) << e.what();
  }
  spec["scaling"]["mscale_all_dim"] = "one";
  EXPECT_THROW(rope_spec_from_json(spec), InvalidInput);
}

TEST(ScalingJson, MalformedSpecsAreInvalidInput) {
  RopeScaling s;
  s.kind = ScalingKind::yarn;
  s.original_max_position = 4096;
  s.factor = 4;
  Json j = scaling_json(s);
  j.erase("beta_fast");
  EXPECT_THROW(scaling_from_json(j), InvalidInput);
  Json spec = rope_spec_json(RopeSpec{});
  spec["scaling"] = scaling_json(s);
  spec["scaling"]["factor"] = "four";
  EXPECT_THROW(rope_spec_from_json(spec), InvalidInput);
  spec["scaling"]["factor"] = 0.5;  // below 1: validate() refuses it
  EXPECT_THROW(rope_spec_from_json(spec), InvalidInput);
  spec = rope_spec_json(RopeSpec{});
  spec["layout"] = "diagonal";
  EXPECT_THROW(rope_spec_from_json(spec), InvalidInput);
}

// The manifest's tolerance, read back, is tolerance.h's bound for the case's spec and storage,
// in both angle precisions, at the case's own positions and frequencies.
TEST_F(ScaledVectors, ToleranceReadBackIsTheToleranceModel) {
  for (const ManifestCase& c : read_manifest(root()).cases) {
    if (c.kind != "rope") continue;
    const auto positions = read_npy(c.file("positions").path).as_int64();
    const auto theta = read_npy(c.file("theta").path).as_float64();
    const double a = attention_factor(c.rope_spec);
    for (const AnglePrecision angles :
         {AnglePrecision::fp64, AnglePrecision::fp32, AnglePrecision::fp32_recurrence}) {
      RopeSpec spec = c.rope_spec;
      spec.angle_precision = angles;
      const ErrorModel model = error_model(spec, c.dtype);
      for (const std::int64_t m : positions) {
        for (std::size_t i = 0; i < theta.size(); ++i) {
          const int pair = static_cast<int>(i);
          EXPECT_DOUBLE_EQ(c.rope_tolerance.bound_units(angles, m, theta[i], pair),
                           rotation_bound_units(model, m, theta[i], pair))
              << c.name << " " << to_string(angles) << " position " << m << " pair " << i;
        }
      }
    }
    for (const double p : {0.0, 0x1p-30, 0x1p-14, 0.75, 3.0}) {
      EXPECT_EQ(c.rope_tolerance.unit_pair_norm(p), unit_pair_norm(c.dtype, a, p)) << c.name << " |p| " << p;
    }
  }
}

TEST_F(ScaledVectors, EveryScaledCaseCarriesItsEffectiveValuesHfMappingAndConventions) {
  int cases = 0;
  for (const Json& entry : json()["cases"]) {
    if (entry["kind"] != "rope") continue;
    const GoldenRopeCase& g = golden(entry["name"].get<std::string>());
    if (!is_scaled(g)) {
      EXPECT_FALSE(entry.contains("conventions")) << entry["name"];
      continue;
    }
    ++cases;
    const RopeScaling& s = g.spec.scaling;
    const std::string name = entry["name"].get<std::string>();
    EXPECT_EQ(entry["scaling_effective"]["attention_factor"].get<double>(), attention_factor(g.spec)) << name;
    EXPECT_EQ(entry["tolerance"]["rotation_bound_units"]["attention_factor"].get<double>(),
              attention_factor(g.spec)) << name;
    const Json& hf = entry["hf_transformers"];
    ASSERT_TRUE(hf.is_object()) << name;
    EXPECT_EQ(hf["head_dim"], g.spec.head_dim) << name;
    if (g.spec.rotary_dim != g.spec.head_dim) {
      EXPECT_EQ(hf["partial_rotary_factor"].get<double>() * g.spec.head_dim, g.spec.rotary_dim) << name;
    }
    switch (s.kind) {
      case ScalingKind::yarn:
      case ScalingKind::longrope:
        // Newer transformers take the factor as max_position_embeddings / original: the same.
        EXPECT_EQ(hf["max_position_embeddings"].get<double>() / static_cast<double>(s.original_max_position),
                  s.factor) << name;
        break;
      case ScalingKind::dynamic_ntk:
        EXPECT_EQ(hf["max_position_embeddings"], s.original_max_position) << name;
        EXPECT_EQ(entry["scaling_effective"]["ntk_base"].get<double>(), ntk_base(g.spec)) << name;
        break;
      case ScalingKind::ntk:
        EXPECT_EQ(hf["rope_theta"].get<double>(), ntk_base(g.spec)) << name;
        break;
      default:
        break;
    }
    if (s.kind == ScalingKind::longrope) {
      EXPECT_EQ(entry["scaling_effective"]["factors_used"], side_of(s) == "above" ? "long" : "short") << name;
    }
    const Json& notes = entry["conventions"];
    ASSERT_TRUE(notes.is_array() && !notes.empty()) << name;
    for (const Json& n : notes) {
      for (const char* key : {"topic", "this_case", "elsewhere"}) {
        EXPECT_TRUE(n.contains(key) && !n[key].get<std::string>().empty()) << name << " " << n.dump();
      }
    }
    EXPECT_EQ(entry["outputs"]["q"], name + "/q_out.npy");
  }
  EXPECT_EQ(cases, 22);  // 21 forward, and the backward's YaRN case (backward_golden_cases.cc)
}

// The notes say what decides each switch, with the case's numbers: the LongRoPE boundary case is
// where transformers and vLLM part.
TEST_F(ScaledVectors, ConventionNotesStateTheSwitchOfEachCase) {
  const auto notes_of = [&](const std::string& name) {
    for (const Json& entry : json()["cases"]) {
      if (entry["name"] == name) return entry["conventions"].dump();
    }
    return std::string();
  };
  const std::string boundary = notes_of("longrope_d96_half_split_b1e4_phi3_mini_boundary");
  EXPECT_NE(boundary.find("sequence_length = 4097 = max(positions) + 1 (4097), L = 4096: long factors"),
            std::string::npos) << boundary;
  EXPECT_NE(boundary.find("which picks short here"), std::string::npos) << boundary;
  const std::string below = notes_of("dynamic_ntk_f2_d128_half_split_b1e4_below_switch");
  EXPECT_NE(below.find("L' = 4096 <= L = 4096, the unscaled table"), std::string::npos) << below;
  const std::string yarn = notes_of("yarn_f4_d128_half_split_b1e6_qwen25_7b");
  EXPECT_NE(yarn.find("cos and sin multiplied by a = 0.1 ln(4) + 1"), std::string::npos) << yarn;
  EXPECT_NE(yarn.find("correction range [23, 40]"), std::string::npos) << yarn;
  const std::string deepseek = notes_of("yarn_f40_d64_interleaved_b1e4_deepseek_v3");
  EXPECT_NE(deepseek.find("the explicit attention_factor 1"), std::string::npos) << deepseek;
  // get_mscale(40, 1) / get_mscale(40, 0.707), python3: (0.1 * math.log(40) + 1) /
  // (0.1 * 0.707 * math.log(40) + 1) printed with '%.17g'.
  const std::string ratio = notes_of("yarn_f40_d64_interleaved_b1e4_mscale_ratio");
  EXPECT_NE(ratio.find("get_mscale(40, 1) / get_mscale(40, 0.707) = (0.1 * 1 ln(40) + 1) / (0.1 * 0.707 "
                       "ln(40) + 1) = 1.0857263992561355"),
            std::string::npos) << ratio;
}

// The mscale case states DeepSeek's keys in its spec and in the HF config that reproduces it.
TEST_F(ScaledVectors, TheMscaleCaseCarriesDeepSeeksKeys) {
  for (const Json& entry : json()["cases"]) {
    if (entry["name"] != "yarn_f40_d64_interleaved_b1e4_mscale_ratio") continue;
    EXPECT_EQ(entry["spec"]["scaling"]["mscale"], 1.0);
    EXPECT_EQ(entry["spec"]["scaling"]["mscale_all_dim"], 0.707);
    EXPECT_TRUE(entry["spec"]["scaling"]["attention_factor"].is_null());
    const Json& rope_scaling = entry["hf_transformers"]["rope_scaling"];
    EXPECT_EQ(rope_scaling["mscale"], 1.0);
    EXPECT_EQ(rope_scaling["mscale_all_dim"], 0.707);
    EXPECT_FALSE(rope_scaling.contains("attention_factor"));
    EXPECT_NEAR(entry["scaling_effective"]["attention_factor"].get<double>(), 1.0857263992561355, 1e-15);
    return;
  }
  ADD_FAILURE() << "no case yarn_f40_d64_interleaved_b1e4_mscale_ratio";
}

}  // namespace
}  // namespace ropecheck
