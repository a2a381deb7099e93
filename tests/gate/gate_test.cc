// `ropecheck gate` end to end, on the real binary: a large injected slowdown (60% through
// ROPECHECK_BENCH_SLOWDOWN, a wrapper script as the current side) must exit 1 with its JUnit,
// markdown and gate.json, its warm-up and pilot rounds run but not judged; `compare` judges the same rounds again as process-level samples; bad
// usage exits 2. No test here asserts a measured speed other than that large slowdown's verdict.
//   build/tests/gate_tests --gtest_filter='Gate.*'
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/exit_codes.h"
#include "tests/support/gate_test_case.h"
#include "tests/support/slowed_wrapper.h"
#include "tests/support/test_process.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;
using test::contains;
using test::slowed_wrapper;

// One small, always available case, off this machine's cache boundaries (gate_test_case.h).
const std::string kFilter = test::gate_case_filter();

TEST(Gate, SixtyPercentInjectedSlowdownIsARegression) {
  const ScratchDir dir("gate_slow");
  const auto current = slowed_wrapper(dir.path(), "kernel/scalar=60");
  const auto out = dir / "gate";
  const auto r = test::spawn({ROPECHECK_CLI_PATH, "gate", "--base", ROPECHECK_CLI_PATH,
                              "--current", current.string(), "--filter", kFilter, "--rounds", "6",
                              "--pilot-rounds", "3", "--repetitions", "2", "--min-time", "0.01", "--out", out.string(),
                              "--junit", (dir / "gate.xml").string(), "--markdown",
                              (dir / "gate.md").string()});
  ASSERT_EQ(r.code, kExitFailed) << r.out << r.err;
  EXPECT_TRUE(contains(r.out, "REGRESSION")) << r.out;
  EXPECT_TRUE(contains(r.out, "-> REGRESSION (exit 1)")) << r.out;

  const auto json = nlohmann::json::parse(test::slurp(out / "gate.json"));
  ASSERT_EQ(json["cases"].size(), 1u);
  EXPECT_EQ(json["cases"][0]["verdict"], "REGRESSION");
  EXPECT_EQ(json["cases"][0]["rounds"], 6);
  EXPECT_EQ(json["rounds"].size(), 6u);  // judged; the warm-up round is not among them
  EXPECT_EQ(json["warmup_rounds"], 1);
  // --measure auto (the default): 3 pilot rounds chose the measure and were not judged.
  EXPECT_EQ(json["measure"], "auto");
  EXPECT_EQ(json["pilot_rounds"], 3);
  const auto measure = json["cases"][0]["measure"].get<std::string>();
  EXPECT_TRUE(measure == "time" || measure == "limit") << measure;
  EXPECT_TRUE(json["cases"][0]["pilot_spread_percent"]["time"].is_number()) << json["cases"][0];
  EXPECT_TRUE(json["cpu"].is_number_integer()) << json["cpu"];  // pinned (cpu_pinning.h)
  EXPECT_EQ(json["summary"]["exit_code"], 1);
  // Orders come in balanced pairs.
  EXPECT_NE(json["rounds"][0]["order"], json["rounds"][1]["order"]);
  EXPECT_TRUE(contains(test::slurp(dir / "gate.xml"), "failures=\"1\"")) << test::slurp(dir / "gate.xml");
  EXPECT_TRUE(contains(test::slurp(dir / "gate.md"), "ropecheck gate: REGRESSION"));
  for (const char* side : {"base", "current"}) {
    for (const char* round : {"round-01", "round-04"}) {
      // One process per case and side in a round (the filter matches one case).
      EXPECT_TRUE(fs::exists(out / side / round / "case-01" / "bench.json")) << side << "/" << round;
    }
    EXPECT_FALSE(fs::exists(out / side / "round-07")) << side;
    // Run, but kept apart from the judged rounds (and from what compare reads below).
    EXPECT_TRUE(fs::exists(out / "warmup" / side / "warmup-01" / "bench.json")) << side;
    EXPECT_TRUE(fs::exists(out / "pilot" / side / "round-03" / "case-01" / "bench.json")) << side;
  }

  // The same rounds as stored runs: compare takes one sample per process.
  const auto c = test::spawn({ROPECHECK_CLI_PATH, "compare", (out / "base").string(),
                              (out / "current").string(), "--json", (dir / "compare.json").string()});
  EXPECT_EQ(c.code, kExitFailed) << c.out << c.err;
  EXPECT_TRUE(contains(c.out, "samples: one per process")) << c.out;
  const auto compared = nlohmann::json::parse(test::slurp(dir / "compare.json"));
  EXPECT_EQ(compared["samples"], "processes");
  EXPECT_EQ(compared["cases"][0]["base_repetitions"], 6);
}

TEST(Gate, BadUsageIsExit2) {
  const ScratchDir dir("gate_usage");
  const std::string out = (dir / "gate").string();
  const auto only_base = test::spawn({ROPECHECK_CLI_PATH, "gate", "--base", ROPECHECK_CLI_PATH, "--out", out});
  EXPECT_EQ(only_base.code, kExitUsage);
  EXPECT_TRUE(contains(only_base.err, "--base OLD --current NEW")) << only_base.err;
  const auto two_rounds = test::spawn({ROPECHECK_CLI_PATH, "gate", "--base", ROPECHECK_CLI_PATH,
                                       "--current", ROPECHECK_CLI_PATH, "--rounds", "2", "--out", out});
  EXPECT_EQ(two_rounds.code, kExitUsage);
  const auto two_pilots = test::spawn({ROPECHECK_CLI_PATH, "gate", "--base", ROPECHECK_CLI_PATH, "--current",
                                       ROPECHECK_CLI_PATH, "--pilot-rounds", "2", "--out", out});
  EXPECT_EQ(two_pilots.code, kExitUsage);
  EXPECT_TRUE(contains(two_pilots.err, "--pilot-rounds must be >= 3")) << two_pilots.err;
  const auto missing = test::spawn({ROPECHECK_CLI_PATH, "gate", "--base", "/nonexistent/ropecheck",
                                    "--current", ROPECHECK_CLI_PATH, "--out", out});
  EXPECT_EQ(missing.code, kExitUsage);
  EXPECT_TRUE(contains(missing.err, "does not exist")) << missing.err;
  // A side that runs but fails: nothing judged.
  const auto failing = test::spawn({ROPECHECK_CLI_PATH, "gate", "--base", "/bin/false", "--current",
                                    ROPECHECK_CLI_PATH, "--filter", kFilter, "--out", out});
  EXPECT_EQ(failing.code, kExitUsage);
  EXPECT_TRUE(contains(failing.err, "exited with 1")) << failing.err;
  const auto bad_threshold = test::spawn({ROPECHECK_CLI_PATH, "gate", "--base", ROPECHECK_CLI_PATH,
                                          "--current", ROPECHECK_CLI_PATH, "--threshold", "0", "--out", out});
  EXPECT_EQ(bad_threshold.code, kExitUsage);
  const auto bad_cpu = test::spawn({ROPECHECK_CLI_PATH, "gate", "--base", ROPECHECK_CLI_PATH, "--current",
                                    ROPECHECK_CLI_PATH, "--filter", kFilter, "--cpu", "100000", "--out", out});
  EXPECT_EQ(bad_cpu.code, kExitUsage);
  EXPECT_TRUE(contains(bad_cpu.err, "--cpu 100000")) << bad_cpu.err;
}

TEST(Gate, PluginModePairsTheTwoPluginsCasesWhateverTheyAreCalled) {
  const ScratchDir dir("gate_plugin");
  const auto out = dir / "gate";
  const std::string plugin = test::built_plugin("good_rope");
  const auto r = test::spawn({ROPECHECK_CLI_PATH, "gate", "--base-plugin", plugin, "--plugin",
                              plugin, "--filter", "^plugin/[^/]+/llama7b_decode_at4095/interleaved/",
                              "--rounds", "3", "--repetitions", "1", "--min-time", "0.01",
                              "--out", out.string()});
  // An A/A gate: any verdict but "could not judge" (no speed is asserted).
  ASSERT_NE(r.code, kExitUsage) << r.out << r.err;
  const auto json = nlohmann::json::parse(test::slurp(out / "gate.json"));
  ASSERT_EQ(json["cases"].size(), 1u);
  EXPECT_TRUE(json["cases"][0]["name"].get<std::string>().starts_with(
      "plugin/*/llama7b_decode_at4095/interleaved/"))
      << json["cases"][0]["name"];
}

TEST(Gate, PythonModePairsTheTwoFunctionsCases) {
  const std::string python = ROPECHECK_NUMPY_PYTHON;
  if (python.empty()) GTEST_FAIL() << "no interpreter with numpy was found at configure time";
  const ScratchDir dir("gate_python");
  const auto out = dir / "gate";
  const std::string function = std::string(ROPECHECK_SOURCE_DIR) + "/plugins/examples/python/numpy_rope.py:apply";
  const auto r = test::spawn({ROPECHECK_CLI_PATH, "gate", "--base-python", function, "--python", function,
                              "--python-exe", python, "--filter",
                              "^python/[^/]+/llama7b_decode_at4095/interleaved/", "--rounds", "3",
                              "--repetitions", "1", "--min-time", "0.01", "--out", out.string()});
  ASSERT_NE(r.code, kExitUsage) << r.out << r.err;  // an A/A gate: any verdict but "could not judge"
  const auto json = nlohmann::json::parse(test::slurp(out / "gate.json"));
  ASSERT_EQ(json["cases"].size(), 1u);
  EXPECT_TRUE(json["cases"][0]["name"].get<std::string>().starts_with(
      "python/*/llama7b_decode_at4095/interleaved/"))
      << json["cases"][0]["name"];
  // Not FILE.py:FUNCTION: bad usage before anything runs.
  const auto bad = test::spawn({ROPECHECK_CLI_PATH, "gate", "--base-python", "numpy_rope:apply", "--python",
                                function, "--out", out.string()});
  EXPECT_EQ(bad.code, kExitUsage);
  EXPECT_TRUE(contains(bad.err, "FILE.py:FUNCTION")) << bad.err;
}

TEST(Gate, HelpDocumentsTheExitCodes) {
  const auto r = test::spawn({ROPECHECK_CLI_PATH, "gate", "--help"});
  EXPECT_EQ(r.code, kExitOk);
  for (const char* part : {"0 PASS", "1 REGRESSION", "2 bad usage", "3 INCONCLUSIVE", "--max-seconds",
                           "--junit", "--markdown", "--base-plugin"}) {
    EXPECT_TRUE(contains(r.out, part)) << part << "\n" << r.out;
  }
}

}  // namespace
}  // namespace ropecheck
