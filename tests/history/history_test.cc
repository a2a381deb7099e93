// `ropecheck history add` and `history report` on histories built from synthetic bench runs
// (tests/support/synthetic_bench.h): a known 10% step at a known commit among noisy runs is marked
// there and nowhere else, runs of two machines stay on two lines, a truncated or foreign file is
// exit 2 naming it with nothing changed, a run is checked before it is written, and the commit
// comes from git when the command runs in a checkout.
//   build/tests/history_tests --gtest_filter='History*'
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_app.h"
#include "core/errors.h"
#include "core/exit_codes.h"
#include "history/analysis.h"
#include "history/entry.h"
#include "history/history_page.h"
#include "history/iso_time.h"
#include "history/store.h"
#include "tests/support/synthetic_bench.h"
#include "tests/support/test_process.h"

namespace ropecheck::history {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;
using test::slurp;
using test::SyntheticCase;
using test::SyntheticRun;

struct CliResult {
  int code = -1;
  std::string out, err;
};

CliResult cli(std::vector<std::string> args) {
  args.insert(args.begin(), "ropecheck");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  CliResult r;
  r.code = run_cli(static_cast<int>(argv.size()), argv.data(), out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

const std::vector<std::string> kCases = {
    "kernel/avx512/llama7b_prefill4096/interleaved/real_time/threads:1",
    "kernel/avx512/llama7b_decode_at4095/interleaved/real_time/threads:1",
    "kernel/avx2/llama7b_prefill4096/interleaved/real_time/threads:1"};

// The i-th commit of a synthetic history: an id unique in its first 7 characters, a day apart.
std::string commit_id(std::size_t i) { return fmt::format("{:07x}{}", 0x1a2b000 + 17 * i, std::string(33, 'e')); }
std::string commit_date(std::size_t i) { return format_utc(*parse_iso8601("2026-10-01T09:00:00Z") + 86400 * static_cast<std::int64_t>(i)); }

struct HistorySpec {
  std::size_t commits = 14, runs = 2;
  double cv = 0.03;              // between processes (the measured spread: a few per cent)
  std::size_t step_at = 9;       // the first commit of the step
  double step = 0.9;             // the stepped case's fraction and rate from there on
  std::string stepped = kCases[0];
  std::string cpu_model = "Synthetic CPU @ 3.0GHz";
  double level = 1.0;            // every case's level, as a multiple of its base
  std::uint64_t seed = 1;
  std::size_t first_commit = 0;  // runs at commits first_commit..commits-1
};

// Records spec's runs with `history add` (commit and date given: no git needed).
void record(const fs::path& history, const fs::path& scratch, const HistorySpec& spec) {
  std::mt19937_64 rng(spec.seed);
  std::normal_distribution<double> process(0, spec.cv);
  for (std::size_t c = spec.first_commit; c < spec.commits; ++c) {
    for (std::size_t r = 0; r < spec.runs; ++r) {
      SyntheticRun run;
      run.cpu_model = spec.cpu_model;
      run.date = format_utc(*parse_iso8601(commit_date(c)) + 3600 + 60 * static_cast<std::int64_t>(r));
      run.seed = spec.seed * 1000 + c * 10 + r;
      for (std::size_t k = 0; k < kCases.size(); ++k) {
        // Each process is off by its own few per cent (all its repetitions alike).
        const double level = spec.level * (1 + process(rng)) *
                             (kCases[k] == spec.stepped && c >= spec.step_at ? spec.step : 1.0);
        run.cases.push_back({kCases[k], (0.8 - 0.2 * static_cast<double>(k)) * level, (20 + 5 * static_cast<double>(k)) * level});
      }
      const auto dir = test::write_synthetic_run(scratch / fmt::format("{}-{}-{}", spec.cpu_model.substr(0, 4), c, r), run);
      const auto added = cli({"history", "add", "--dir", history.string(), "--commit", commit_id(c),
                              "--commit-date", commit_date(c), dir.string()});
      ASSERT_EQ(added.code, 0) << added.out << added.err;
    }
  }
}

// Every file under `dir` with its bytes: what "nothing changed" compares.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) files[e.path().string()] = slurp(e.path());
  }
  return files;
}

std::size_t total_steps(const HistoryAnalysis& a) {
  std::size_t n = 0;
  for (const auto& f : a.fits) n += f.fit.steps.size();
  return n;
}

TEST(HistoryIsoTime, ReadsOffsetsAndWritesUtc) {
  EXPECT_EQ(format_utc(*parse_iso8601("2026-11-25T17:29:13+01:00")), "2026-11-25T16:29:13Z");
  EXPECT_EQ(format_utc(*parse_iso8601("2026-11-25T17:29:13-0230")), "2026-11-25T19:59:13Z");
  EXPECT_EQ(format_utc(*parse_iso8601("2024-02-29T23:59:59.123Z")), "2024-02-29T23:59:59Z");
  EXPECT_EQ(compact_utc(*parse_iso8601("1970-01-01T00:00:00Z")), "19700101T000000Z");
  for (const char* bad : {"2026-02-30T00:00:00Z", "2026-11-25 17:29:13Z", "2026-11-25T17:29:13",
                          "2026-11-25T17:29:13Zjunk", "2026-11-25T25:00:00Z", ""}) {
    EXPECT_FALSE(parse_iso8601(bad).has_value()) << bad;
  }
}

// The acceptance criterion, end to end through files: 14 commits x 2 runs of 3 cases with 3%
// between processes; one case 10% slower from commit 9 on.
TEST(HistoryReport, KnownStepIsMarkedAtItsCommitAndNoOtherCommitIsMarked) {
  const ScratchDir scratch;
  const fs::path history = scratch / "history";
  record(history, scratch / "runs", {});
  const HistoryAnalysis analysis = analyse_history(history, "", {});
  ASSERT_EQ(analysis.view.commits.size(), 14u);
  ASSERT_EQ(analysis.view.lines.size(), 1u);
  ASSERT_EQ(total_steps(analysis), 1u);
  const auto rows = step_rows(analysis);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].case_name, kCases[0]);
  EXPECT_EQ(rows[0].commit.substr(0, 12), short_commit(commit_id(9)));
  EXPECT_EQ(rows[0].after, short_commit(commit_id(8)));
  const Step& step = analysis.fits[rows[0].series].fit.steps[rows[0].step];
  EXPECT_LT(step.low, -0.1 + 0.04);
  EXPECT_GT(step.high, -0.1 - 0.04);

  const fs::path out = scratch / "page";
  const auto r = cli({"history", "report", "--dir", history.string(), "--out", out.string()});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("1 step(s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("STEP  " + kCases[0]), std::string::npos) << r.out;
  const std::string md = slurp(out / "history.md"), html = slurp(out / "history.html");
  EXPECT_NE(md.find(short_commit(commit_id(9))), std::string::npos);
  // The page opens with the steps, each row the commit, the case and the size, before any plot.
  const auto first_heading = md.find("\n## ");
  ASSERT_NE(first_heading, std::string::npos);
  EXPECT_EQ(md.compare(first_heading + 1, 9, "## Steps\n"), 0) << md.substr(0, 600);
  const auto step_row = md.find("\n| `" + short_commit(commit_id(9)) + " (");
  ASSERT_NE(step_row, std::string::npos) << md.substr(0, 2000);
  const std::string row = md.substr(step_row + 1, md.find('\n', step_row + 1) - step_row - 1);
  EXPECT_NE(row.find("` | `" + kCases[0] + "` | -"), std::string::npos) << row;
  EXPECT_LT(step_row, md.find("\n!["));
  EXPECT_LT(html.find("<h2 id=\"steps\""), html.find("<svg"));
  // One plot per case, inlined; the step drawn on the stepped case's plot only.
  std::size_t svgs = 0, arrows = 0;
  for (const auto& e : fs::directory_iterator(out / "plots")) {
    if (e.path().extension() == ".svg") ++svgs;
    if (e.path().extension() != ".gp") continue;
    const std::string gp = slurp(e.path());
    if (gp.find("set arrow") == std::string::npos) continue;
    ++arrows;
    EXPECT_NE(gp.find(kCases[0].substr(0, 13)), std::string::npos) << e.path();
    EXPECT_NE(gp.find(commit_id(9).substr(0, 7)), std::string::npos) << e.path();
  }
  EXPECT_EQ(svgs, kCases.size());
  EXPECT_EQ(arrows, 1u);
  std::size_t inlined = 0;
  for (auto at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1)) ++inlined;
  EXPECT_EQ(inlined, kCases.size());
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST(HistoryReport, RunsOfTwoMachinesAreKeptOnTwoLines) {
  const ScratchDir scratch;
  const fs::path history = scratch / "history";
  // The CI runner was replaced at commit 6: machine A ran commits 0-5, machine B, 40% lower, runs
  // 6-13. Drawn on one line, the new machine would be a step at commit 6 in every case.
  HistorySpec a, b;
  a.step = b.step = 1.0;
  a.commits = 6;
  b.cpu_model = "Other CPU @ 2.0GHz";
  b.level = 0.6;
  b.first_commit = 6;
  b.seed = 2;
  record(history, scratch / "runs", a);
  record(history, scratch / "runs", b);
  const HistoryAnalysis analysis = analyse_history(history, "", {});
  ASSERT_EQ(analysis.view.lines.size(), 2u);
  EXPECT_NE(analysis.view.lines[0].machine_id, analysis.view.lines[1].machine_id);
  EXPECT_EQ(analysis.view.series.size(), 2 * kCases.size());
  for (const auto& s : analysis.view.series) {
    for (const auto& c : s.commits) {
      for (const auto& run : c.runs) {
        EXPECT_EQ(analysis.view.entries[run.entry].entry.machine.id, analysis.view.lines[s.line].machine_id);
      }
    }
  }
  EXPECT_EQ(analysis.view.lines[0].commits.size(), 6u);
  EXPECT_EQ(analysis.view.lines[1].commits.size(), 8u);
  EXPECT_EQ(total_steps(analysis), 0u);
  const fs::path out = scratch / "page";
  const auto r = cli({"history", "report", "--dir", history.string(), "--out", out.string()});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const std::string md = slurp(out / "history.md");
  EXPECT_NE(md.find(analysis.view.lines[0].machine_id), std::string::npos);
  EXPECT_NE(md.find(analysis.view.lines[1].machine_id), std::string::npos);

  // The control: the same runs with B's hardware facts equal to A's share A's line, and the
  // machine's change at commit 6 is marked as a step. So the separation above is what kept them
  // apart.
  const ScratchDir merged;
  HistorySpec same_cpu = b;
  same_cpu.cpu_model = a.cpu_model;
  record(merged / "history", merged / "runs", a);
  record(merged / "history", merged / "runs", same_cpu);
  const HistoryAnalysis one_line = analyse_history(merged / "history", "", {});
  EXPECT_EQ(one_line.view.lines.size(), 1u);
  EXPECT_EQ(total_steps(one_line), kCases.size());
}

class HistoryBadFile : public testing::Test {
 protected:
  void SetUp() override {
    HistorySpec spec;
    spec.commits = 3;
    record(history_, scratch_ / "runs", spec);
    SyntheticRun fresh;
    fresh.date = "2026-12-01T10:00:00Z";
    fresh.cases = {{kCases[0], 0.8, 20}};
    fresh_run_ = test::write_synthetic_run(scratch_ / "fresh", fresh);
  }

  // history report and history add both refuse the history, naming `bad`, and change nothing.
  void expect_refused(const fs::path& bad, const std::string& why) {
    const auto before = snapshot(history_);
    const auto report = cli({"history", "report", "--dir", history_.string(), "--out", (scratch_ / "page").string()});
    EXPECT_EQ(report.code, kExitUsage) << report.out << report.err;
    EXPECT_NE(report.err.find(bad.string()), std::string::npos) << report.err;
    EXPECT_NE(report.err.find(why), std::string::npos) << report.err;
    const auto add = cli({"history", "add", "--dir", history_.string(), "--commit", commit_id(5), "--commit-date",
                          commit_date(5), fresh_run_.string()});
    EXPECT_EQ(add.code, kExitUsage) << add.out << add.err;
    EXPECT_NE(add.err.find(bad.string()), std::string::npos) << add.err;
    EXPECT_EQ(snapshot(history_), before);
  }

  fs::path first_entry() const {
    for (const auto& e : fs::recursive_directory_iterator(history_)) {
      if (e.path().extension() == ".json") return e.path();
    }
    return {};
  }

  ScratchDir scratch_;
  fs::path history_ = scratch_ / "history";
  fs::path fresh_run_;
};

TEST_F(HistoryBadFile, ATruncatedEntryIsExit2NamingItAndNothingChanges) {
  const fs::path file = first_entry();
  const std::string text = slurp(file);
  std::ofstream(file, std::ios::trunc) << text.substr(0, text.size() / 2);
  expect_refused(file, "not JSON");
}

TEST_F(HistoryBadFile, AForeignJsonFileIsExit2NamingIt) {
  const fs::path file = history_ / "package.json";
  std::ofstream(file) << R"({"name": "not-a-history-entry", "version": "1.0.0"})";
  expect_refused(file, "not a history entry");
}

TEST_F(HistoryBadFile, ABenchJsonDroppedIntoTheHistoryIsExit2NamingIt) {
  const fs::path file = history_ / "bench.json";
  fs::copy_file(fresh_run_ / "bench.json", file);
  expect_refused(file, "not a history entry");
}

TEST_F(HistoryBadFile, AnEntryOfAnotherSchemaVersionIsExit2NamingIt) {
  const fs::path file = first_entry();
  std::string text = slurp(file);
  text.replace(text.find("ropecheck.history/2"), 19, "ropecheck.history/9");
  std::ofstream(file, std::ios::trunc) << text;
  expect_refused(file, "ropecheck.history/9");
}

TEST_F(HistoryBadFile, OtherFilesAndHiddenFoldersAreNotRead) {
  std::ofstream(history_ / "README.md") << "kept in a branch\n";
  fs::create_directories(history_ / ".git");
  std::ofstream(history_ / ".git" / "config.json") << "not json";
  const auto report = cli({"history", "report", "--dir", history_.string(), "--out", (scratch_ / "page").string()});
  EXPECT_EQ(report.code, kExitOk) << report.err;
}

TEST(HistoryAdd, ARunIsCheckedBeforeAnythingIsWritten) {
  const ScratchDir scratch;
  const fs::path history = scratch / "history";
  SyntheticRun good;
  good.cases = {{kCases[0], 0.8, 20}};
  const auto run = test::write_synthetic_run(scratch / "run", good);
  const auto add = [&](const fs::path& dir) {
    return cli({"history", "add", "--dir", history.string(), "--commit", commit_id(0), "--commit-date",
                commit_date(0), dir.string()});
  };
  // Truncated.
  const std::string text = slurp(run / "bench.json");
  fs::create_directories(scratch / "truncated");
  std::ofstream(scratch / "truncated" / "bench.json") << text.substr(0, text.size() / 2);
  auto r = add(scratch / "truncated");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find((scratch / "truncated" / "bench.json").string()), std::string::npos) << r.err;
  // Built with sanitizers.
  SyntheticRun sanitized = good;
  sanitized.sanitized = "true";
  r = add(test::write_synthetic_run(scratch / "asan", sanitized));
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("ASan"), std::string::npos) << r.err;
  // Google Benchmark JSON without ropecheck's context.
  fs::create_directories(scratch / "foreign");
  std::ofstream(scratch / "foreign" / "bench.json") << R"({"context": {"date": "2026-11-01T10:00:00+00:00"}, "benchmarks": [{"name": "BM_x", "run_type": "iteration", "real_time": 1, "cpu_time": 1, "time_unit": "ns"}]})";
  r = add(scratch / "foreign");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("not a ropecheck bench run"), std::string::npos) << r.err;
  // No bench.json at all.
  r = add(scratch.path());
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("no bench.json"), std::string::npos) << r.err;
  // A --commit-date without --commit, and a date that is not one.
  r = cli({"history", "add", "--dir", history.string(), "--commit-date", commit_date(0), run.string()});
  EXPECT_EQ(r.code, kExitUsage);
  r = cli({"history", "add", "--dir", history.string(), "--commit", "abc", "--commit-date", "yesterday", run.string()});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("--commit-date"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(history));  // nothing was written by any of them
  // The good run, then the same run again: recorded once.
  r = add(run);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("recorded"), std::string::npos) << r.out;
  r = add(run);
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("already recorded"), std::string::npos) << r.out;
  EXPECT_EQ(read_history(history, false).size(), 1u);
  // The same run under another commit: refused.
  r = cli({"history", "add", "--dir", history.string(), "--commit", commit_id(1), "--commit-date", commit_date(1),
           run.string()});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("already in the history"), std::string::npos) << r.err;
  EXPECT_EQ(read_history(history, false).size(), 1u);
}

TEST(HistoryAdd, TheEntryCarriesWhatGroupsAndQualifiesIt) {
  const ScratchDir scratch;
  SyntheticRun run;
  run.cases = {{kCases[0], 0.8, 20}, {kCases[1], 0.5, 30}};
  const auto dir = test::write_synthetic_run(scratch / "run", run);
  const auto r = cli({"history", "add", "--dir", (scratch / "h").string(), "--commit", commit_id(3),
                      "--commit-date", "2026-11-25T17:29:13+01:00", "--branch", "main", "--machine", "ci-large",
                      dir.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const auto entries = read_history(scratch / "h", false);
  ASSERT_EQ(entries.size(), 1u);
  const Entry& e = entries[0].entry;
  EXPECT_EQ(entries[0].file.parent_path().filename().string(), e.machine.id);
  EXPECT_EQ(e.machine.id.rfind("ci-large-", 0), 0u) << e.machine.id;
  EXPECT_EQ(e.commit.id, commit_id(3));
  EXPECT_EQ(format_utc(e.commit.time), "2026-11-25T16:29:13Z");
  EXPECT_EQ(e.commit.branch, "main");
  EXPECT_EQ(e.machine.cpu_model, run.cpu_model);
  EXPECT_EQ(e.machine.dispatched_isa, "avx512");
  EXPECT_EQ(e.build.compiler, "GNU 12.2.0");
  EXPECT_EQ(e.build.build_type, "RelWithDebInfo");
  EXPECT_EQ(e.build.openblas_threads, 2);
  ASSERT_EQ(e.cases.size(), 2u);
  EXPECT_EQ(e.cases[0].rate_unit, "GB/s");
  EXPECT_EQ(e.cases[0].limit_fraction.size(), 3u);
  EXPECT_EQ(e.cases[0].probe_rate.size(), 3u);
  EXPECT_NEAR(e.cases[0].probe_rate[0] * e.cases[0].limit_fraction[0], e.cases[0].rate[0], 1e-6);
  // The same hardware under another name is another line; another CPU under the same name too.
  SyntheticRun other = run;
  other.cpu_model = "Other CPU";
  other.date = "2026-11-02T10:00:00Z";
  EXPECT_EQ(cli({"history", "add", "--dir", (scratch / "h").string(), "--commit", commit_id(3), "--commit-date",
                 "2026-11-25T17:29:13+01:00", "--machine", "ci-large",
                 test::write_synthetic_run(scratch / "other", other).string()})
                .code,
            kExitOk);
  const auto both = read_history(scratch / "h", false);
  ASSERT_EQ(both.size(), 2u);
  EXPECT_NE(both[0].entry.machine.id, both[1].entry.machine.id);
}

// The commit from git: a scratch checkout with two commits of known dates.
class HistoryGit : public testing::Test {
 protected:
  void SetUp() override {
    git("init -q");
    commit("first", "2026-10-01T10:00:00+02:00");
    commit("second", "2026-10-02T10:00:00+02:00");
    SyntheticRun r;
    r.cases = {{kCases[0], 0.8, 20}};
    run_ = test::write_synthetic_run(scratch_ / "run", r);
  }
  std::string git(const std::string& args) {
    const auto r = test::spawn({"/bin/sh", "-c", "git " + args}, repo_.path());
    EXPECT_EQ(r.code, 0) << args << r.err;
    return r.out.substr(0, r.out.find('\n'));
  }
  void commit(const std::string& message, const std::string& date) {
    const auto r = test::spawn({"/bin/sh", "-c",
                                "GIT_COMMITTER_DATE=" + date + " GIT_AUTHOR_DATE=" + date +
                                    " git -c user.name=t -c user.email=t@example.com commit -q --allow-empty -m " +
                                    message},
                               repo_.path());
    ASSERT_EQ(r.code, 0) << r.err;
  }

  ScratchDir repo_{"history_git"}, scratch_;
  fs::path run_;
};

TEST_F(HistoryGit, HeadOfTheCheckoutIsTheCommitByDefault) {
  const auto r = cli({"history", "add", "--dir", (scratch_ / "h").string(), "--repo", repo_.str(), run_.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const auto entries = read_history(scratch_ / "h", false);
  ASSERT_EQ(entries.size(), 1u);
  const Entry& e = entries[0].entry;
  EXPECT_EQ(e.commit.id, git("rev-parse HEAD"));
  EXPECT_EQ(e.commit.id.size(), 40u);
  EXPECT_EQ(format_utc(e.commit.time), "2026-10-02T08:00:00Z");
  EXPECT_EQ(e.commit.subject, "second");
  EXPECT_EQ(e.commit.branch, git("symbolic-ref --short HEAD"));
  EXPECT_EQ(e.commit.ancestors, 2);
}

TEST_F(HistoryGit, CommitsOfTheSameSecondAreOrderedByAncestry) {
  // A quick series (or a rebase) gives its commits one committer date to the second.
  commit("third", "2026-10-03T10:00:00+02:00");
  commit("fourth", "2026-10-03T10:00:00+02:00");
  // The fourth commit's run is the earlier one: the order the runs were made in must not decide.
  SyntheticRun early, late;
  early.date = "2026-10-04T08:00:00Z";
  late.date = "2026-10-04T09:00:00Z";
  early.cases = late.cases = {{kCases[0], 0.8, 20}};
  const auto h = (scratch_ / "h").string();
  ASSERT_EQ(cli({"history", "add", "--dir", h, "--repo", repo_.str(), "--commit", "HEAD",
                 test::write_synthetic_run(scratch_ / "early", early).string()}).code, kExitOk);
  ASSERT_EQ(cli({"history", "add", "--dir", h, "--repo", repo_.str(), "--commit", "HEAD~1",
                 test::write_synthetic_run(scratch_ / "late", late).string()}).code, kExitOk);
  const HistoryAnalysis a = analyse_history(scratch_ / "h", "", {});
  ASSERT_EQ(a.view.commits.size(), 2u);
  EXPECT_EQ(a.view.commits[0].subject, "third");
  EXPECT_EQ(a.view.commits[1].subject, "fourth");
}

TEST_F(HistoryGit, AnEarlierCommitByRevision) {
  const auto r = cli({"history", "add", "--dir", (scratch_ / "h").string(), "--repo", repo_.str(), "--commit",
                      "HEAD~1", run_.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const auto entries = read_history(scratch_ / "h", false);
  ASSERT_EQ(entries.size(), 1u);
  const Entry& e = entries[0].entry;
  EXPECT_EQ(e.commit.id, git("rev-parse HEAD~1"));
  EXPECT_EQ(e.commit.subject, "first");
  EXPECT_EQ(e.commit.ancestors, 1);
  EXPECT_EQ(format_utc(e.commit.time), "2026-10-01T08:00:00Z");
}

TEST_F(HistoryGit, NoCheckoutOrNoSuchCommitIsExit2) {
  auto r = cli({"history", "add", "--dir", (scratch_ / "h").string(), "--repo", scratch_.str(), run_.string()});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("--commit-date"), std::string::npos) << r.err;  // says what to pass instead
  r = cli({"history", "add", "--dir", (scratch_ / "h").string(), "--repo", repo_.str(), "--commit",
           "no-such-branch", run_.string()});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find("no-such-branch"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(scratch_ / "h"));
}

TEST(HistoryCli, UsageErrorsAreExit2) {
  const ScratchDir scratch;
  EXPECT_EQ(cli({"history"}).code, kExitUsage);
  EXPECT_EQ(cli({"history", "report", "--dir", (scratch / "missing").string()}).code, kExitUsage);
  const auto empty = cli({"history", "report", "--dir", scratch.str(), "--out", (scratch / "page").string()});
  EXPECT_EQ(empty.code, kExitUsage);
  EXPECT_NE(empty.err.find("no history entry"), std::string::npos) << empty.err;
  EXPECT_EQ(cli({"history", "add", "--help"}).code, kExitOk);
  EXPECT_EQ(cli({"history", "report", "--help"}).code, kExitOk);
}

TEST(HistoryCli, ReportFilterAndSettingsAreChecked) {
  const ScratchDir scratch;
  HistorySpec spec;
  spec.commits = 4;
  record(scratch / "h", scratch / "runs", spec);
  const auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"history", "report", "--dir", (scratch / "h").string(), "--out",
                                     (scratch / "page").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return cli(args);
  };
  EXPECT_EQ(run({"--filter", "nothing-matches"}).code, kExitUsage);
  EXPECT_EQ(run({"--filter", "("}).code, kExitUsage);
  EXPECT_EQ(run({"--alpha", "1.5"}).code, kExitUsage);
  EXPECT_EQ(run({"--min-step", "-1"}).code, kExitUsage);
  ASSERT_EQ(run({}).code, kExitOk);
  const auto one = run({"--filter", "avx2"});
  ASSERT_EQ(one.code, kExitOk) << one.err;
  EXPECT_NE(one.out.find("1 case(s)"), std::string::npos) << one.out;
  // The earlier page's plots of the cases now filtered out are gone.
  std::size_t svgs = 0;
  for (const auto& e : fs::directory_iterator(scratch / "page" / "plots")) svgs += e.path().extension() == ".svg";
  EXPECT_EQ(svgs, 1u);
}

}  // namespace
}  // namespace ropecheck::history
