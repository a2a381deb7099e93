// The main job with ROPECHECK_HISTORY: its bench joins the history under the commit checked out
// where it runs, the history page is rendered beside the report, and the report links it. Driven
// through main_job_history() on the report fixture's bench.json and a scratch checkout, without
// the whole main job (CliMainJob runs that).
//   build/tests/cli_tests --gtest_filter='MainJobHistory*'
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "cli/main_job.h"
#include "core/errors.h"
#include "history/store.h"
#include "reports/report.h"
#include "tests/support/test_process.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;
using test::slurp;

TEST(MainJobHistory, RecordsTheRunRendersThePageAndTheReportLinksIt) {
  const ScratchDir repo("main_job_repo"), scratch;
  const auto git = test::spawn({"/bin/sh", "-c",
                                "git init -q && git -c user.name=t -c user.email=t@example.com commit -q "
                                "--allow-empty -m 'the commit measured'"},
                               repo.path());
  ASSERT_EQ(git.code, 0) << git.err;
  const fs::path run = scratch / "latest";
  fs::create_directories(run);
  fs::copy_file(fs::path(ROPECHECK_REPORT_FIXTURE) / "bench.json", run / "bench.json");
  const fs::path history = scratch / "history";

  const ReportHistoryLink link = main_job_history(run, history, repo.path());
  EXPECT_EQ(link.page, "history/history.html");
  EXPECT_NE(link.summary.find("1 run(s) of 1 commit(s)"), std::string::npos) << link.summary;
  EXPECT_TRUE(link.steps.empty());
  EXPECT_TRUE(fs::is_regular_file(run / "history" / "history.html"));
  EXPECT_TRUE(fs::is_regular_file(run / "history" / "history.md"));
  const auto entries = history::read_history(history, false);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].entry.commit.subject, "the commit measured");

  ReportOptions report;
  report.in_dir = run;
  report.out_dir = run;
  report.history = link;
  std::ostringstream out;
  ASSERT_EQ(run_report(report, out), 0);
  EXPECT_NE(slurp(run / "report.md").find("[The history of stored runs](history/history.html)"), std::string::npos);
  EXPECT_NE(slurp(run / "report.html").find("<a href=\"history/history.html\">"), std::string::npos);
}

TEST(MainJobHistory, OutsideACheckoutIsBadInputNotASilentSkip) {
  const ScratchDir not_a_repo, scratch;
  const fs::path run = scratch / "latest";
  fs::create_directories(run);
  fs::copy_file(fs::path(ROPECHECK_REPORT_FIXTURE) / "bench.json", run / "bench.json");
  EXPECT_THROW(main_job_history(run, scratch / "history", not_a_repo.path()), InvalidInput);
  EXPECT_FALSE(fs::exists(scratch / "history"));
}

}  // namespace
}  // namespace ropecheck
