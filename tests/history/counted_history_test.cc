// Counted runs in a history (counted.json, history/README.md "Counted lines"): a +2% step in
// estimated cycles at a known commit is marked there, exactly once, with its size; an A/A history
// of identical counts marks nothing; runs counted on different hosts share one line; a malformed
// counted.json is exit 2 naming it with nothing written; a directory holding bench.json and
// counted.json records both; an entry of schema /1 is still read.
//   build/tests/history_tests --gtest_filter='Counted*'
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_app.h"
#include "core/exit_codes.h"
#include "history/analysis.h"
#include "history/counted_steps.h"
#include "history/history_page.h"
#include "history/store.h"
#include "tests/support/in_process_cli.h"
#include "tests/support/synthetic_bench.h"
#include "tests/support/synthetic_counted.h"
#include "tests/support/test_process.h"

namespace ropecheck::history {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;
using test::slurp;

const std::string kStepped = "kernel/avx2/llama7b_decode_at4095/interleaved/real_time/threads:1";
const std::string kSteady = "kernel/scalar/llama7b_decode_at4095/interleaved/real_time/threads:1";

std::string counted_commit(std::size_t i) { return fmt::format("{:07x}{}", 0xc0de000 + 23 * i, std::string(33, 'f')); }
std::string counted_commit_date(std::size_t i) { return fmt::format("2026-10-{:02}T09:00:00Z", i + 1); }

// `commits` commits, `runs` runs each (alternating between two hosts), kStepped's events scaled by
// `step` from commit `step_at` on; each recorded with `history add`.
void record_counted(const fs::path& history, const fs::path& scratch, std::size_t commits, std::size_t runs,
                    std::size_t step_at, double step) {
  for (std::size_t c = 0; c < commits; ++c) {
    for (std::size_t r = 0; r < runs; ++r) {
      const std::string started = fmt::format("2026-10-{:02}T1{}:00:00Z", c + 1, r);
      const auto run = test::synthetic_counted_run(started, {{kStepped, c >= step_at ? step : 1.0}, {kSteady, 1.0}},
                                                   (c + r) % 2 ? "Host CPU A" : "Host CPU B");
      const auto dir = test::write_counted_run(scratch / fmt::format("run-{}-{}", c, r), run);
      const auto added = test::run_in_process({"history", "add", "--dir", history.string(), "--commit", counted_commit(c),
                                      "--commit-date", counted_commit_date(c), dir.string()});
      ASSERT_EQ(added.code, kExitOk) << added.out << added.err;
      ASSERT_NE(added.out.find("counted cases"), std::string::npos) << added.out;
    }
  }
}

std::size_t marks(const HistoryAnalysis& a) {
  std::size_t n = 0;
  for (const auto& f : a.fits) n += f.fit.steps.size();
  return n;
}

TEST(CountedHistory, ATwoPercentStepIsMarkedAtItsCommitOnceWithItsSize) {
  const ScratchDir scratch;
  const fs::path history = scratch / "history";
  record_counted(history, scratch / "runs", 6, 1, 4, 1.02);
  const HistoryAnalysis a = analyse_history(history, "", {});
  // Two hosts, one line: the counts do not depend on the host.
  ASSERT_EQ(a.view.lines.size(), 1u);
  EXPECT_TRUE(a.view.lines[0].counted);
  EXPECT_EQ(a.view.lines[0].machine_id.rfind("counted-avx2-", 0), 0u) << a.view.lines[0].machine_id;
  ASSERT_EQ(a.view.commits.size(), 6u);
  EXPECT_EQ(a.tests, 0u);  // no statistical test on a counted line
  ASSERT_EQ(marks(a), 1u);
  const auto rows = step_rows(a);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].case_name, kStepped);
  EXPECT_EQ(rows[0].commit.substr(0, 12), short_commit(counted_commit(4)));
  EXPECT_EQ(rows[0].after, short_commit(counted_commit(3)));
  EXPECT_EQ(a.fits[rows[0].series].measure, Series::Measure::cycles);
  const Step& step = a.fits[rows[0].series].fit.steps[rows[0].step];
  EXPECT_NEAR(step.change, 0.02, 1e-4);
  EXPECT_NE(rows[0].change.find("+2.00%"), std::string::npos) << rows[0].change;
  EXPECT_NE(rows[0].change.find("counted"), std::string::npos) << rows[0].change;
  EXPECT_TRUE(is_slowdown(Series::Measure::cycles, step.change));

  const fs::path out = scratch / "page";
  const auto r = test::run_in_process({"history", "report", "--dir", history.string(), "--out", out.string()});
  ASSERT_EQ(r.code, kExitOk) << r.out << r.err;
  EXPECT_NE(r.out.find("1 step(s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("STEP  " + kStepped), std::string::npos) << r.out;
  const std::string md = slurp(out / "history.md");
  const auto row_at = md.find("\n| `" + short_commit(counted_commit(4)) + " (");
  ASSERT_NE(row_at, std::string::npos) << md.substr(0, 2000);
  const std::string row = md.substr(row_at + 1, md.find('\n', row_at + 1) - row_at - 1);
  EXPECT_NE(row.find("+2.00% of estimated cycles per call (counted)"), std::string::npos) << row;
  const std::string html = slurp(out / "history.html");
  // More cycles is slower: the change is drawn as a failure.
  EXPECT_NE(html.find("<td class=\"num fail\">+2.00% of estimated cycles per call (counted)"), std::string::npos);
  EXPECT_NE(html.find("Ir + 8 x (L1 misses - LL misses) + 60 x LL misses"), std::string::npos);
  // Each case's counted plot: cycles above, instructions below; the step drawn on the stepped one.
  std::size_t arrows = 0, plots = 0;
  for (const auto& e : fs::directory_iterator(out / "plots")) {
    if (e.path().extension() != ".gp") continue;
    ++plots;
    const std::string gp = slurp(e.path());
    EXPECT_NE(gp.find("estimated cycles per call"), std::string::npos) << e.path();
    EXPECT_NE(gp.find("instructions per call"), std::string::npos) << e.path();
    if (gp.find("set arrow") == std::string::npos) continue;
    ++arrows;
    EXPECT_NE(gp.find("+2.00% at " + counted_commit(4).substr(0, 7)), std::string::npos) << gp;
  }
  EXPECT_EQ(plots, 2u);
  EXPECT_EQ(arrows, 1u);
}

TEST(CountedHistory, IdenticalCountsMarkNothingEvenAtAZeroThreshold) {
  const ScratchDir scratch;
  const fs::path history = scratch / "history";
  record_counted(history, scratch / "runs", 6, 2, 0, 1.0);
  for (const double threshold : {1.0, 0.0}) {
    StepSettings settings;
    settings.min_counted_step_percent = threshold;
    const HistoryAnalysis a = analyse_history(history, "", settings);
    ASSERT_EQ(a.view.lines.size(), 1u);
    EXPECT_EQ(a.view.entries.size(), 12u);
    EXPECT_EQ(marks(a), 0u) << threshold;
    for (const auto& f : a.fits) EXPECT_EQ(f.fit.noise, 0.0);
  }
  const auto r = test::run_in_process({"history", "report", "--dir", history.string(), "--out", (scratch / "page").string(),
                              "--min-counted-step", "0"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("0 step(s)"), std::string::npos) << r.out;
  EXPECT_EQ(test::run_in_process({"history", "report", "--dir", history.string(), "--out", (scratch / "page").string(),
                         "--min-counted-step", "-1"})
                .code,
            kExitUsage);
}

TEST(CountedHistory, ASmallerChangeThanTheThresholdIsNotMarked) {
  // 0.5% at commit 3: under the default 1%, marked at 0.25%.
  const ScratchDir scratch;
  record_counted(scratch / "h", scratch / "runs", 6, 1, 3, 1.005);
  EXPECT_EQ(marks(analyse_history(scratch / "h", "", {})), 0u);
  StepSettings fine;
  fine.min_counted_step_percent = 0.25;
  const HistoryAnalysis a = analyse_history(scratch / "h", "", fine);
  ASSERT_EQ(marks(a), 1u);
  EXPECT_EQ(step_rows(a)[0].commit.substr(0, 12), short_commit(counted_commit(3)));
}

TEST(CountedSteps, OneRunEachSideAndARecovery) {
  const double base = std::log(1000.0);
  // Commits 0-2 at 1000, 3-4 at 1020 (+2%), 5 back at 1000.
  const std::vector<std::vector<double>> runs = {{base}, {base}, {base, base}, {base + std::log(1.02)},
                                                 {base + std::log(1.02)}, {base}};
  const StepFit fit = fit_counted_steps(runs, 0.01);
  ASSERT_EQ(fit.steps.size(), 2u);
  EXPECT_EQ(fit.steps[0].at, 3u);
  EXPECT_NEAR(fit.steps[0].change, 0.02, 1e-12);
  EXPECT_EQ(fit.steps[1].at, 5u);
  EXPECT_NEAR(fit.steps[1].change, 1 / 1.02 - 1, 1e-12);
  ASSERT_EQ(fit.segments.size(), 3u);
  EXPECT_EQ(fit.segments[0].last, 2u);
  EXPECT_EQ(fit.segments[1].first, 3u);
  EXPECT_EQ(fit.segments[1].runs, 2u);
  EXPECT_EQ(fit.noise, 0.0);
}

TEST(CountedHistory, AMalformedCountedJsonIsExit2NamingItAndNothingIsWritten) {
  const ScratchDir scratch;
  const fs::path history = scratch / "history";
  const auto good = test::write_counted_run(scratch / "good",
                                            test::synthetic_counted_run("2026-10-01T10:00:00Z", {{kStepped, 1.0}}));
  const std::string text = slurp(good / "counted.json");
  const auto add = [&](const fs::path& run) {
    return test::run_in_process({"history", "add", "--dir", history.string(), "--commit", counted_commit(0), "--commit-date",
                        counted_commit_date(0), run.string()});
  };
  // Truncated.
  fs::create_directories(scratch / "truncated");
  std::ofstream(scratch / "truncated" / "counted.json") << text.substr(0, text.size() / 2);
  auto r = add(scratch / "truncated");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find((scratch / "truncated" / "counted.json").string()), std::string::npos) << r.err;
  // A case with nothing counted, given as the file itself.
  auto empty = test::synthetic_counted_run("2026-10-01T10:00:00Z", {{kStepped, 1.0}});
  empty.cases[0].calls = 0;
  test::write_counted_run(scratch / "empty", empty);
  r = add(scratch / "empty" / "counted.json");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find((scratch / "empty" / "counted.json").string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nothing was counted"), std::string::npos) << r.err;
  // Beside a good bench.json: neither is written.
  test::SyntheticRun bench;
  bench.cases = {{kStepped, 0.8, 20}};
  test::write_synthetic_run(scratch / "truncated", bench);
  r = add(scratch / "truncated");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find((scratch / "truncated" / "counted.json").string()), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(history));
  // A directory with neither file says so.
  r = add(scratch.path());
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("nor counted.json"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(history));
  // The good one is recorded.
  EXPECT_EQ(add(good).code, kExitOk);
  EXPECT_EQ(read_history(history, false).size(), 1u);
}

TEST(CountedHistory, ADirectoryWithBenchAndCountedJsonRecordsBothOnTheirOwnLines) {
  const ScratchDir scratch;
  test::SyntheticRun bench;
  bench.cases = {{kStepped, 0.8, 20}};
  const auto dir = test::write_synthetic_run(scratch / "run", bench);
  test::write_counted_run(dir, test::synthetic_counted_run("2026-11-01T11:00:00Z", {{kStepped, 1.0}}));
  const auto r = test::run_in_process({"history", "add", "--dir", (scratch / "h").string(), "--commit", counted_commit(0),
                              "--commit-date", counted_commit_date(0), "--machine", "ci", dir.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const auto entries = read_history(scratch / "h", false);
  ASSERT_EQ(entries.size(), 2u);
  std::size_t counted = 0;
  for (const auto& e : entries) counted += e.entry.is_counted();
  EXPECT_EQ(counted, 1u);
  EXPECT_NE(entries[0].entry.machine.id, entries[1].entry.machine.id);
  for (const auto& e : entries) {
    // --machine names the host's line only.
    EXPECT_EQ(e.entry.machine.id.rfind(e.entry.is_counted() ? "counted-avx2-" : "ci-", 0), 0u) << e.entry.machine.id;
  }
  const HistoryAnalysis a = analyse_history(scratch / "h", "", {});
  EXPECT_EQ(a.view.lines.size(), 2u);
  EXPECT_EQ(a.view.series.size(), 2u);
  // A bench.json written while counting (its cases carry counted_calls) is not recorded as times.
  auto json = nlohmann::json::parse(slurp(dir / "bench.json"));
  for (auto& b : json["benchmarks"]) b["counted_calls"] = 10;
  std::ofstream(dir / "bench.json", std::ios::trunc) << json.dump();
  test::write_counted_run(dir, test::synthetic_counted_run("2026-11-02T11:00:00Z", {{kStepped, 1.0}}));
  const auto again = test::run_in_process({"history", "add", "--dir", (scratch / "h2").string(), "--commit",
                                  counted_commit(1), "--commit-date", counted_commit_date(1), dir.string()});
  ASSERT_EQ(again.code, kExitOk) << again.err;
  EXPECT_NE(again.out.find("written while counting"), std::string::npos) << again.out;
  const auto only = read_history(scratch / "h2", false);
  ASSERT_EQ(only.size(), 1u);
  EXPECT_TRUE(only[0].entry.is_counted());
  const auto alone = test::run_in_process({"history", "add", "--dir", (scratch / "h3").string(), "--commit",
                                  counted_commit(1), "--commit-date", counted_commit_date(1),
                                  (dir / "bench.json").string()});
  EXPECT_EQ(alone.code, kExitUsage);
  EXPECT_NE(alone.err.find("under callgrind"), std::string::npos) << alone.err;
}

TEST(CountedHistory, AnEntryOfSchemaOneIsStillReadAsTimed) {
  const ScratchDir scratch;
  test::SyntheticRun bench;
  bench.cases = {{kStepped, 0.8, 20}};
  ASSERT_EQ(test::run_in_process({"history", "add", "--dir", (scratch / "h").string(), "--commit", counted_commit(0),
                         "--commit-date", counted_commit_date(0),
                         test::write_synthetic_run(scratch / "run", bench).string()})
                .code,
            kExitOk);
  const fs::path file = read_history(scratch / "h", false).at(0).file;
  std::string text = slurp(file);
  text.replace(text.find("ropecheck.history/2"), 19, "ropecheck.history/1");
  const auto measure = text.find("\"measure\": \"timed\",");
  ASSERT_NE(measure, std::string::npos) << text.substr(0, 200);
  text.erase(measure, std::string("\"measure\": \"timed\",").size());
  std::ofstream(file, std::ios::trunc) << text;
  const auto entries = read_history(scratch / "h", false);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_FALSE(entries[0].entry.is_counted());
  EXPECT_EQ(entries[0].entry.cases.at(0).repetitions(), 3u);
}

}  // namespace
}  // namespace ropecheck::history
