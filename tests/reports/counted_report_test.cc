// `ropecheck report` of a directory holding counted.json: the "Counted (callgrind)" section with
// one row per case (estimated cycles, instructions, L1 and LL misses, per call) and how they were
// counted, in report.md and report.html; with a counted baseline, each case's change in estimated
// cycles to two decimals; a counted-only baseline is accepted.
//   build/tests/reports_tests --gtest_filter='CountedReport*'
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_app.h"
#include "core/exit_codes.h"
#include "reports/counted_section.h"
#include "tests/support/in_process_cli.h"
#include "tests/support/markdown_row.h"
#include "tests/support/synthetic_counted.h"
#include "tests/support/test_process.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;
using test::slurp;

const std::string kDecode = "kernel/avx2/llama7b_decode_at4095/interleaved/real_time/threads:1";
const std::string kPrefill = "kernel/avx2/llama7b_prefill512/interleaved/real_time/threads:1";

TEST(CountedReport, TheSectionShowsEveryCaseWithItsCountsPerCall) {
  const ScratchDir scratch;
  const CountedRun run = test::synthetic_counted_run("2026-11-01T10:00:00Z", {{kDecode, 1.0}, {kPrefill, 1.0}});
  const auto in = test::write_counted_run(scratch / "in", run);
  const auto r = test::run_in_process({"report", "--in", in.string(), "--out", (scratch / "out").string()});
  ASSERT_EQ(r.code, kExitOk) << r.out << r.err;
  const std::string md = slurp(scratch / "out" / "report.md"), html = slurp(scratch / "out" / "report.html");
  ASSERT_NE(md.find("## Counted (callgrind)"), std::string::npos);
  for (const CountedCase& c : run.cases) {
    const auto row = test::markdown_row(md, "`" + c.name + "`");
    ASSERT_EQ(row.size(), 5u) << c.name;
    EXPECT_EQ(row[1], format_count(c.estimated_cycles));
    EXPECT_EQ(row[2], format_count(c.instructions()));
    EXPECT_EQ(row[3], format_count(c.l1_misses()));
    EXPECT_EQ(row[4], format_count(c.ll_misses()));
  }
  // The values themselves, from the synthetic counts (synthetic_counted.h), per call of 10:
  // Ir 4e6, L1 misses 36400, LL misses 3000 -> 400000 + 8 x 3340 + 60 x 300 = 444720 cycles.
  const auto decode = test::markdown_row(md, "`" + kDecode + "`");
  ASSERT_EQ(decode.size(), 5u);
  EXPECT_EQ(decode[1], "444720");
  EXPECT_EQ(decode[2], "400000");
  EXPECT_EQ(decode[3], "3640");
  EXPECT_EQ(decode[4], "300.00");
  for (const std::string& text : {std::string("Ir + 8 x (L1 misses - LL misses) + 60 x LL misses"),
                                  std::string("avx2 kernel level (Valgrind runs no AVX-512)"),
                                  std::string("I1 32 KiB 8-way, D1 32 KiB 8-way, LL 8 MiB 16-way"),
                                  std::string("valgrind-3.19.0")}) {
    EXPECT_NE(md.find(text), std::string::npos) << text;
    EXPECT_NE(html.find(text), std::string::npos) << text;
  }
  EXPECT_NE(html.find(">Counted (callgrind)</h2>"), std::string::npos);
  EXPECT_NE(html.find(">444720</td>"), std::string::npos);
  EXPECT_EQ(md.find("change in estimated cycles"), std::string::npos);  // no baseline
}

TEST(CountedReport, ACountedBaselineGivesTheChangeInCyclesToTwoDecimals) {
  const ScratchDir scratch;
  const auto in = test::write_counted_run(
      scratch / "in", test::synthetic_counted_run("2026-11-02T10:00:00Z", {{kDecode, 1.02}, {kPrefill, 0.99}}));
  const auto base = test::write_counted_run(
      scratch / "base", test::synthetic_counted_run("2026-11-01T10:00:00Z", {{kDecode, 1.0}}));
  const auto r = test::run_in_process(
      {"report", "--in", in.string(), "--baseline", base.string(), "--out", (scratch / "out").string()});
  ASSERT_EQ(r.code, kExitOk) << r.out << r.err;
  const std::string md = slurp(scratch / "out" / "report.md");
  const auto decode = test::markdown_row(md, "`" + kDecode + "`");
  ASSERT_EQ(decode.size(), 7u) << md;
  EXPECT_EQ(decode[5], "444720");
  EXPECT_EQ(decode[6], "+2.00%");
  const auto prefill = test::markdown_row(md, "`" + kPrefill + "`");
  ASSERT_EQ(prefill.size(), 7u);
  EXPECT_EQ(prefill[6], "(not in the baseline)");
  // No bench.json on either side: no timed comparison.
  EXPECT_EQ(md.find("## Against the baseline"), std::string::npos);
  // A baseline with neither file is refused, naming it.
  const auto bad = test::run_in_process({"report", "--in", in.string(), "--baseline", scratch.str(), "--out",
                               (scratch / "out").string()});
  EXPECT_EQ(bad.code, kExitUsage);
  EXPECT_NE(bad.err.find("nor counted.json"), std::string::npos) << bad.err;
}

TEST(CountedReport, AMalformedCountedJsonIsExit2NamingIt) {
  const ScratchDir scratch;
  fs::create_directories(scratch / "in");
  std::ofstream(scratch / "in" / "counted.json") << R"({"schema": "ropecheck.counted/1", "cases": [)";
  const auto r = test::run_in_process({"report", "--in", (scratch / "in").string(), "--out", (scratch / "out").string()});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.err.find((scratch / "in" / "counted.json").string()), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ropecheck
