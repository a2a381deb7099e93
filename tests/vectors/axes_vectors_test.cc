// The multi-axis golden cases (vectors/axes_golden_cases.cc): their positions written as int64
// [tokens, axes] and read back in the same order, the manifest's spec.axes read back exactly, the
// expected values recomputed here from the models' own section rules (apart from the oracle), and
// `ropecheck check` judging a port's outputs on them: the right rotation passes, one with the h
// and w axes swapped or with the axes dropped fails, positions of another shape are bad input.
// Older manifests (format 2) keep reading.
//   cmake --build build --target vectors_tests && build/tests/vectors_tests --gtest_filter='AxesVectors*'
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_app.h"
#include "core/errors.h"
#include "core/exit_codes.h"
#include "impls/oracle/oracle.h"
#include "tests/support/in_process_cli.h"
#include "tests/support/golden_vectors_fixture.h"
#include "tests/support/test_process.h"
#include "vectors/axes_golden_cases.h"
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

using AxesCheckRun = test::CliRun;

AxesCheckRun check_axes_outputs(const fs::path& vectors, const fs::path& out, bool only_present = true) {
  std::vector<std::string> args = {"check", "--vectors", vectors.string(), "--outputs", out.string()};
  if (only_present) args.emplace_back("--only-present");
  return test::run_in_process(std::move(args));
}

// The vectors, written once for the suite.
class AxesVectors : public test::GoldenVectorsTest {};

// The case's positions with axes a and b exchanged on every token.
std::vector<std::int64_t> swapped(const GoldenRopeCase& c, int a, int b) {
  auto p = c.positions;
  const auto axes = static_cast<std::size_t>(axis_count(c.spec));
  for (std::size_t t = 0; t < p.size(); t += axes) std::swap(p[t + static_cast<std::size_t>(a)], p[t + static_cast<std::size_t>(b)]);
  return p;
}

// The axis that must not be confused with another: h and w (t, h, w), or row and column.
std::pair<int, int> confusable_axes(const GoldenRopeCase& c) {
  return c.spec.axes.mode == AxisMode::vision ? std::pair{0, 1} : std::pair{1, 2};
}

TEST_F(AxesVectors, TheCasesAreTheVisionLanguageModelsTheyName) {
  const auto& cases = axes_golden_rope_cases();
  ASSERT_EQ(cases.size(), 3u);
  EXPECT_EQ(cases[0].spec.axes, (PositionAxes{AxisMode::mrope, {16, 24, 24}}));
  EXPECT_EQ(cases[0].spec.head_dim, 128);
  EXPECT_EQ(cases[1].spec.axes, (PositionAxes{AxisMode::imrope, {24, 20, 20}}));
  EXPECT_EQ(cases[1].spec.head_dim, 128);
  EXPECT_EQ(cases[2].spec.axes, (PositionAxes{AxisMode::vision, {20, 20, 0}}));
  EXPECT_EQ(cases[2].spec.head_dim, 80);
  for (const auto& c : cases) {
    EXPECT_EQ(c.spec.layout, Layout::half_split) << c.name;  // HF's rotate_half, as the models run
    // Listed among the golden cases, after the one-axis ones.
    const auto all = golden_rope_cases();
    EXPECT_TRUE(std::any_of(all.begin(), all.end(), [&](const GoldenRopeCase& g) { return g.name == c.name; }));
  }
  // A text-and-image prompt as Qwen2-VL's get_rope_index gives it: text on one diagonal, the
  // image at a fixed t on an h x w grid, the text after it resuming past the grid.
  EXPECT_EQ(text_image_positions(2, 1, 2, 1),
            (std::vector<std::int64_t>{0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 3, 4, 4, 4}));
  EXPECT_EQ(merged_patch_grid_positions(2, 4), (std::vector<std::int64_t>{0, 0, 0, 1, 1, 0, 1, 1,  //
                                                                           0, 2, 0, 3, 1, 2, 1, 3}));
}

// Written as [tokens, axes], token-major, with the manifest's spec.axes; both read back to the
// case's own (a writer or reader that dropped or reordered the axes would not).
TEST_F(AxesVectors, PositionsAndAxesAreWrittenAndReadBackInOrder) {
  const Manifest read = read_manifest(vectors());
  for (const auto& c : axes_golden_rope_cases()) {
    SCOPED_TRACE(c.name);
    const int axes = axis_count(c.spec);
    const NpyArray positions = file(c, "positions");
    EXPECT_EQ(positions.descr, kNpyInt64);
    EXPECT_EQ(positions.shape, (std::vector<std::int64_t>{golden_tokens(c), axes}));
    EXPECT_EQ(positions.as_int64(), c.positions);
    const Json& spec = entry(c)["spec"];
    EXPECT_EQ(spec["axes"]["mode"], std::string(to_string(c.spec.axes.mode)));
    EXPECT_EQ(spec["axes"]["sections"].size(), static_cast<std::size_t>(axes));
    EXPECT_EQ(entry(c)["files"]["positions"]["shape"], positions.shape);
    const auto found = std::find_if(read.cases.begin(), read.cases.end(),
                                    [&](const ManifestCase& m) { return m.name == c.name; });
    ASSERT_NE(found, read.cases.end());
    EXPECT_EQ(found->rope_spec.axes, c.spec.axes);
    EXPECT_EQ(found->tokens, golden_tokens(c));
    // The confusable axes differ on some token: a swap of them changes what is rotated.
    const auto [a, b] = confusable_axes(c);
    EXPECT_NE(swapped(c, a, b), c.positions);
  }
  // A one-axis case keeps [tokens] and says so.
  const auto& plain = golden_rope_cases().front();
  EXPECT_EQ(file(plain, "positions").shape, std::vector<std::int64_t>{golden_tokens(plain)});
  EXPECT_EQ(entry(plain)["spec"]["axes"], (Json{{"mode", "none"}}));
}

// The expected values from the models' own descriptions, written here apart from the oracle:
// Qwen2-VL's cos.split(mrope_section * 2) (consecutive sections), Qwen3-VL's every third pair
// from offsets 1 and 2, the vision tower's two tables restarting at frequency 0.
TEST_F(AxesVectors, ExpectedValuesRotateEachPairByItsAxisPosition) {
  for (const auto& c : axes_golden_rope_cases()) {
    SCOPED_TRACE(c.name);
    const auto& s = c.spec.axes.sections;
    const int pairs = c.spec.rotary_dim / 2;
    const auto axes = static_cast<std::size_t>(axis_count(c.spec));
    const auto axis_of = [&](int i) {
      switch (c.spec.axes.mode) {
        case AxisMode::mrope: return i < s[0] ? 0 : i < s[0] + s[1] ? 1 : 2;
        case AxisMode::imrope: return i % 3 == 1 && i < 3 * s[1] ? 1 : i % 3 == 2 && i < 3 * s[2] ? 2 : 0;
        default: return i < s[0] ? 0 : 1;
      }
    };
    const auto theta_of = [&](int i) {
      if (c.spec.axes.mode != AxisMode::vision) return std::pow(static_cast<long double>(c.spec.base), -2.0L * i / c.spec.rotary_dim);
      const int j = i < s[0] ? i : i - s[0];
      return std::pow(static_cast<long double>(c.spec.base), -2.0L * j / pairs);
    };
    const auto theta = file(c, "theta").as_float64();
    for (int i = 0; i < pairs; ++i) {
      EXPECT_NEAR(theta[static_cast<std::size_t>(i)], static_cast<double>(theta_of(i)), 1e-15 * theta[static_cast<std::size_t>(i)]);
    }
    const auto x = file(c, "q").as_float32();
    const auto want = file(c, "q_expected").as_float64();
    const auto dim = static_cast<std::size_t>(c.spec.head_dim);
    const auto tokens = static_cast<std::size_t>(golden_tokens(c));
    const auto heads = static_cast<std::size_t>(c.q_heads);
    double worst = 0;
    for (std::size_t t = 0; t < tokens; ++t) {
      for (std::size_t h = 0; h < heads; ++h) {
        const std::size_t row = (t * heads + h) * dim;
        for (int i = 0; i < pairs; ++i) {
          const long double m = static_cast<long double>(c.positions[t * axes + static_cast<std::size_t>(axis_of(i))]);
          const long double angle = m * theta_of(i);
          const std::size_t fa = row + static_cast<std::size_t>(i), fb = fa + static_cast<std::size_t>(pairs);
          const long double xa = x[fa], xb = x[fb];
          const double scale = static_cast<double>(std::hypot(xa, xb));
          worst = std::max(worst, std::abs(want[fa] - static_cast<double>(xa * std::cos(angle) - xb * std::sin(angle))) / scale);
          worst = std::max(worst, std::abs(want[fb] - static_cast<double>(xa * std::sin(angle) + xb * std::cos(angle))) / scale);
        }
      }
    }
    EXPECT_LT(worst, 0x1p-48) << "relative to each pair's norm";
  }
}

// check on the multi-axis cases alone (--only-present): the right rotation passes; the same
// rotation with the confusable axes swapped, or with the axes dropped (1D RoPE at the first
// axis's positions, what a port reading one position per token does), fails.
TEST_F(AxesVectors, CheckPassesTheRightRotationAndFailsSwappedOrDroppedAxes) {
  const ScratchDir right("ropecheck_axes_right"), swapped_out("ropecheck_axes_swapped"),
      dropped_out("ropecheck_axes_dropped");
  for (const auto& c : axes_golden_rope_cases()) {
    write_oracle_outputs(right.path(), c, c.spec, c.positions);
    const auto [a, b] = confusable_axes(c);
    write_oracle_outputs(swapped_out.path(), c, c.spec, swapped(c, a, b));
    RopeSpec one_axis = c.spec;
    one_axis.axes = {};
    std::vector<std::int64_t> first;
    const auto axes = static_cast<std::size_t>(axis_count(c.spec));
    for (std::size_t t = 0; t < c.positions.size(); t += axes) first.push_back(c.positions[t]);
    write_oracle_outputs(dropped_out.path(), c, one_axis, first);
  }
  const AxesCheckRun good = check_axes_outputs(vectors(), right.path());
  EXPECT_EQ(good.code, kExitOk) << good.out << good.err;
  EXPECT_TRUE(test::contains(good.out, " rope cases, 3 passed, 0 failed, 0 missing")) << good.out;
  for (const fs::path& out : {swapped_out.path(), dropped_out.path()}) {
    const AxesCheckRun bad = check_axes_outputs(vectors(), out);
    EXPECT_EQ(bad.code, kExitFailed) << out << "\n" << bad.out << bad.err;
    for (const auto& c : axes_golden_rope_cases()) {
      EXPECT_TRUE(std::regex_search(bad.out, std::regex("FAIL +" + c.name + " "))) << c.name << " passed from " << out
                                                                                  << "\n" << bad.out;
    }
  }
  // One element moved: the worst element is judged at its own axis's position and names it. Token 8
  // of the Qwen2-VL case is the image's last patch, (t, h, w) = (3, 4, 5); pair 50 is on w (the
  // sections end at 16 and 40), feature 50 its first half.
  const auto& mrope = axes_golden_rope_cases().front();
  ASSERT_EQ(std::vector<std::int64_t>(mrope.positions.begin() + 24, mrope.positions.begin() + 27),
            (std::vector<std::int64_t>{3, 4, 5}));
  const fs::path q_out = right.path() / mrope.name / "q_out.npy";
  auto q = read_npy(q_out).as_float32();
  q[(8 * static_cast<std::size_t>(mrope.q_heads) + 0) * 128 + 50] += 1.0f;
  write_npy(q_out, q, read_npy(q_out).shape);
  const AxesCheckRun moved = check_axes_outputs(vectors(), right.path());
  EXPECT_EQ(moved.code, kExitFailed) << moved.out;
  EXPECT_TRUE(test::contains(moved.out, "worst: q token 8 head 0 feature 50 (pair 50, position 5, axis 2,"))
      << moved.out;
}

// A vectors directory whose positions do not have the case's axes is bad input (exit 2, the
// file named), not a judgement on the wrong positions.
TEST_F(AxesVectors, PositionsOfAnotherShapeAreBadInput) {
  const ScratchDir scratch("ropecheck_axes_shape");
  const fs::path copy = scratch / "golden";
  fs::copy(vectors(), copy, fs::copy_options::recursive);
  const auto& c = axes_golden_rope_cases().front();
  const fs::path positions = copy / entry(c)["files"]["positions"]["path"].get<std::string>();
  write_npy(positions, c.positions, std::vector<std::int64_t>{static_cast<std::int64_t>(c.positions.size())});
  const ScratchDir out("ropecheck_axes_shape_out");
  write_oracle_outputs(out.path(), c, c.spec, c.positions);
  const AxesCheckRun run = check_axes_outputs(copy, out.path());
  EXPECT_EQ(run.code, kExitUsage) << run.out << run.err;
  EXPECT_TRUE(test::contains(run.err, positions.string())) << run.err;
  EXPECT_TRUE(test::contains(run.err, "expected [tokens][3]")) << run.err;
}

// A format 2 manifest (before spec.axes) reads as one axis per case; a format 3 spec.axes with
// the wrong number of sections is refused.
TEST_F(AxesVectors, AVersion2ManifestKeepsReadingAndBadAxesAreRefused) {
  const ScratchDir scratch("ropecheck_axes_v2");
  const fs::path v2 = scratch / "golden_v2";
  fs::copy(vectors(), v2, fs::copy_options::recursive);
  Json json = Json::parse(slurp(v2 / "manifest.json"));
  json["format"] = kVectorsFormatV2;
  Json cases = Json::array();
  std::size_t rope = 0;
  for (Json c : json["cases"]) {
    if (c["kind"] == "rope_cache" || c["kind"] == "rope_form") continue;  // came with formats 5 and 6
    if (c["kind"] == "rope") {
      if (c["spec"]["axes"]["mode"] != "none") continue;
      c["spec"].erase("axes");
      ++rope;
    }
    cases.push_back(c);
  }
  json["cases"] = cases;
  std::ofstream(v2 / "manifest.json") << json.dump(2);
  const Manifest read = read_manifest(v2);
  EXPECT_EQ(read.format, kVectorsFormatV2);
  for (const auto& c : read.cases) EXPECT_EQ(c.rope_spec.axes, PositionAxes{}) << c.name;
  const ScratchDir out("ropecheck_axes_v2_out");
  for (const auto& c : read.cases) {
    if (c.kind != "rope") continue;
    fs::create_directories(out / c.name);
    for (const std::string tensor : {"q", "k"}) {
      fs::copy_file(c.file(tensor + "_expected_" + std::string(to_string(c.dtype))).path,
                    out / c.name / (tensor + "_out.npy"));
    }
  }
  const AxesCheckRun run = check_axes_outputs(v2, out.path(), false);
  EXPECT_EQ(run.code, kExitOk) << run.out << run.err;
  EXPECT_TRUE(test::contains(run.out, fmt::format("check: {} rope cases, {} passed", rope, rope))) << run.out;

  Json bad = Json::parse(slurp(vectors() / "manifest.json"));
  for (auto& c : bad["cases"]) {
    if (c["name"] == axes_golden_rope_cases().front().name) c["spec"]["axes"]["sections"] = {16, 48};
  }
  const fs::path broken = scratch / "golden_bad";
  fs::copy(vectors(), broken, fs::copy_options::recursive);
  std::ofstream(broken / "manifest.json") << bad.dump(2);
  try {
    read_manifest(broken);
    ADD_FAILURE() << "a mrope spec with 2 sections was read";
  } catch (const InvalidInput& e) {
    EXPECT_TRUE(test::contains(e.what(), "2 sections for mode mrope, which has 3 axes")) << e.what();
  }
}

}  // namespace
}  // namespace ropecheck
