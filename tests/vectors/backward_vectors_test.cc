// The backward pass's golden cases (vectors/backward_golden_cases.cc): their manifest says
// "pass": "backward" (every other case "forward"), and `ropecheck check` judges a port's gradient
// on them: dx = a R(m)^T dy passes, the forward rotation (the sine not flipped) and a gradient
// without the attention factor fail. A format 3 manifest (no pass) reads as the forward; an unknown
// pass is refused.
//   cmake --build build --target vectors_tests && build/tests/vectors_tests --gtest_filter='BackwardVectors*'
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/exit_codes.h"
#include "core/frequency.h"
#include "core/storage.h"
#include "impls/oracle/oracle.h"
#include "tests/support/golden_vectors_fixture.h"
#include "tests/support/in_process_cli.h"
#include "tests/support/test_process.h"
#include "vectors/backward_golden_cases.h"
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

using BackwardCheckRun = test::CliRun;

BackwardCheckRun check_backward_outputs(const fs::path& vectors, const fs::path& out) {
  return test::run_in_process({"check", "--vectors", vectors.string(), "--outputs", out.string(), "--only-present"});
}

// The vectors, written once for the suite.
class BackwardVectors : public test::GoldenVectorsTest {};

TEST_F(BackwardVectors, EveryCaseSaysItsPass) {
  std::size_t backward = 0;
  for (const auto& e : manifest()["cases"]) {
    if (e["kind"] != "rope") continue;
    const bool listed = std::any_of(backward_golden_rope_cases().begin(), backward_golden_rope_cases().end(),
                                    [&](const GoldenRopeCase& c) { return c.name == e["name"]; });
    EXPECT_EQ(e["spec"]["pass"], listed ? "backward" : "forward") << e["name"];
    backward += listed ? 1 : 0;
  }
  EXPECT_EQ(backward, backward_golden_rope_cases().size());
  EXPECT_EQ(manifest()["format"], kVectorsFormat);
}

TEST_F(BackwardVectors, CheckPassesTheGradientAndFailsTheForwardAndAGradientWithoutTheFactor) {
  const ScratchDir right("ropecheck_backward_right"), forward("ropecheck_backward_forward"),
      unscaled("ropecheck_backward_unscaled");
  for (const auto& c : backward_golden_rope_cases()) {
    write_oracle_outputs(right.path(), c, c.spec, c.positions);
    RopeSpec not_flipped = c.spec;
    not_flipped.pass = Pass::forward;  // the sine's sign not flipped: R(m) dy
    write_oracle_outputs(forward.path(), c, not_flipped, c.positions);
    if (attention_factor(c.spec) != 1.0) {
      RopeSpec without = c.spec;
      without.scaling.attention_factor = 1.0;  // the attention factor left out of the gradient
      write_oracle_outputs(unscaled.path(), c, without, c.positions);
    }
  }
  const auto cases = backward_golden_rope_cases().size();
  const BackwardCheckRun good = check_backward_outputs(vectors(), right.path());
  EXPECT_EQ(good.code, kExitOk) << good.out << good.err;
  EXPECT_TRUE(test::contains(good.out, fmt::format(" rope cases, {} passed, 0 failed, 0 missing", cases)))
      << good.out;
  const BackwardCheckRun bad = check_backward_outputs(vectors(), forward.path());
  EXPECT_EQ(bad.code, kExitFailed) << bad.out << bad.err;
  for (const auto& c : backward_golden_rope_cases()) {
    EXPECT_TRUE(std::regex_search(bad.out, std::regex("FAIL +" + c.name + " "))) << c.name << "\n" << bad.out;
  }
  const BackwardCheckRun no_factor = check_backward_outputs(vectors(), unscaled.path());
  EXPECT_EQ(no_factor.code, kExitFailed) << no_factor.out << no_factor.err;
  EXPECT_TRUE(test::contains(no_factor.out, "FAIL     backward_yarn_f40_d64_interleaved_b1e4_mscale_ratio"))
      << no_factor.out;
}

TEST_F(BackwardVectors, AManifestWithoutPassReadsAsTheForwardAndAnUnknownPassIsRefused) {
  Json spec = entry(backward_golden_rope_cases().front())["spec"];
  EXPECT_EQ(rope_spec_from_json(spec).pass, Pass::backward);
  spec.erase("pass");  // format 3 and before
  EXPECT_EQ(rope_spec_from_json(spec).pass, Pass::forward);
  spec["pass"] = "sideways";
  try {
    rope_spec_from_json(spec);
    ADD_FAILURE() << "pass 'sideways' was read";
  } catch (const InvalidInput& e) {
    EXPECT_TRUE(test::contains(e.what(), "unknown pass 'sideways' (forward, backward)")) << e.what();
  }
}

}  // namespace
}  // namespace ropecheck
