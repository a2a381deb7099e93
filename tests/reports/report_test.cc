// `ropecheck report`: renders the fixed results folder tests/data/report/ (a trimmed verify.json,
// bench.json with 3 repetitions per case, accuracy.json, and a baseline bench.json) into a temp
// dir and checks the files, that report.html reaches for nothing on a network, that every SVG is
// inlined, and that the tables carry the input's numbers; plus the exit-2 paths.
//   cmake --build build --target report_test && build/report_test   (ctest -L cli)
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "reports/report.h"
#include "cli/cli_app.h"
#include "core/exit_codes.h"
#include "reports/gnuplot.h"
#include "reports/stats.h"
#include "reports/writer.h"
#include "core/errors.h"
#include "tests/support/markdown_row.h"
#include "tests/support/test_process.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using test::ScratchDir;
using test::slurp;

const fs::path kFixture = ROPECHECK_REPORT_FIXTURE;

struct CliRun {
  int code = -1;
  std::string out, err;
};

CliRun cli(std::vector<std::string> args) {
  args.insert(args.begin(), "ropecheck");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  CliRun run;
  run.code = run_cli(static_cast<int>(argv.size()), argv.data(), out, err);
  run.out = out.str();
  run.err = err.str();
  return run;
}

// The header row of the table that holds the row starting with `first`.
std::vector<std::string> md_header_above(const std::string& md, const std::string& first) {
  const auto at = md.find("| " + first + " |");
  if (at == std::string::npos) return {};
  auto start = md.rfind("\n\n", at);
  start = start == std::string::npos ? 0 : start + 2;
  const auto end = md.find('\n', start);
  std::vector<std::string> cells;
  std::istringstream parts(md.substr(start + 1, end - start - 1));
  for (std::string cell; std::getline(parts, cell, '|');) {
    const auto b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
    cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
  }
  return cells;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// The fixture rendered once for the whole suite (gnuplot takes a while under ASan).
class ReportFixture : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir;
    ReportOptions options;
    options.in_dir = kFixture;
    options.baseline_dir = kFixture / "baseline";
    options.out_dir = dir_->path();
    std::ostringstream out;
    code_ = run_report(options, out);
    md_ = new std::string(slurp(dir_->path() / "report.md"));
    html_ = new std::string(slurp(dir_->path() / "report.html"));
  }
  static void TearDownTestSuite() {
    delete md_;
    delete html_;
    delete dir_;
  }
  static const fs::path& out() { return dir_->path(); }
  static const std::string& md() { return *md_; }
  static const std::string& html() { return *html_; }
  static std::vector<fs::path> svgs() {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(out() / "plots")) {
      if (e.path().extension() == ".svg") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    return files;
  }

  static inline ScratchDir* dir_ = nullptr;
  static inline int code_ = -1;
  static inline std::string* md_ = nullptr;
  static inline std::string* html_ = nullptr;
};

TEST_F(ReportFixture, WritesMarkdownHtmlAndEveryPlotWithItsDataAndScript) {
  ASSERT_EQ(code_, kExitOk);
  EXPECT_TRUE(fs::is_regular_file(out() / "report.md"));
  EXPECT_TRUE(fs::is_regular_file(out() / "report.html"));
  std::set<std::string> names;
  for (const auto& svg : svgs()) names.insert(svg.stem().string());
  // Every plot the fixture's inputs allow: bench (3), accuracy (2), baseline (1).
  EXPECT_EQ(names, (std::set<std::string>{"attention_gflops", "baseline_ratio", "error_vs_position",
                                          "long_range_decay", "rope_limit_fraction",
                                          "rope_throughput_vs_tokens"}));
  for (const auto& name : names) {
    const auto plots = out() / "plots";
    EXPECT_TRUE(fs::is_regular_file(plots / (name + ".dat"))) << name;
    const std::string gp = slurp(plots / (name + ".gp"));
    EXPECT_NE(gp.find("set terminal svg size"), std::string::npos) << name;
    EXPECT_NE(gp.find("dynamic enhanced font 'sans,11'"), std::string::npos) << name;
    EXPECT_NE(gp.find("set output '" + name + ".svg'"), std::string::npos) << name;
    // report.md refers to each plot by its path relative to the report.
    EXPECT_NE(md().find("](plots/" + name + ".svg)"), std::string::npos) << name;
  }
}

TEST_F(ReportFixture, HtmlReferencesNoNetworkResource) {
  ASSERT_EQ(code_, kExitOk);
  EXPECT_EQ(html().find("http://"), std::string::npos);
  EXPECT_EQ(html().find("https://"), std::string::npos);
  EXPECT_EQ(html().find("<script"), std::string::npos);
  EXPECT_EQ(html().find("<link"), std::string::npos);
  EXPECT_EQ(html().find("@import"), std::string::npos);
  const std::regex attribute(R"re(\b(src|href)\s*=\s*["']([^"']*)["'])re", std::regex::icase);
  int seen = 0;
  for (auto it = std::sregex_iterator(html().begin(), html().end(), attribute); it != std::sregex_iterator(); ++it) {
    const std::string value = (*it)[2];
    ++seen;
    EXPECT_EQ(value.find("//"), std::string::npos) << (*it)[0];
    EXPECT_EQ(value.find(':'), std::string::npos) << (*it)[0];  // no scheme: http:, data:, file:
  }
  EXPECT_GT(seen, 0);  // the links of the contents and the SVG point references were checked
}

TEST_F(ReportFixture, EverySvgIsInlinedInTheHtml) {
  ASSERT_EQ(code_, kExitOk);
  const auto files = svgs();
  ASSERT_FALSE(files.empty());
  std::size_t inline_svgs = 0;
  for (auto at = html().find("<svg"); at != std::string::npos; at = html().find("<svg", at + 1)) ++inline_svgs;
  EXPECT_EQ(inline_svgs, files.size());
  for (const auto& file : files) {
    const std::string svg = slurp(file);
    const auto figure = html().find("<figure id=\"" + file.stem().string() + "\">\n<svg");
    ASSERT_NE(figure, std::string::npos) << file;
    // The same drawing: its viewBox and its last text element (gnuplot's own output) are there.
    const std::regex view_box(R"(viewBox="[^"]*")");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(svg, m, view_box)) << file;
    EXPECT_NE(html().find(m[0].str(), figure), std::string::npos) << file;
    EXPECT_EQ(html().find("<?xml"), std::string::npos);
    EXPECT_EQ(html().find("<!DOCTYPE svg"), std::string::npos);
  }
}

TEST_F(ReportFixture, BenchTableHoldsTheMedianLimitFractionOfTheInput) {
  ASSERT_EQ(code_, kExitOk);
  const Json bench = Json::parse(slurp(kFixture / "bench.json"));
  const std::string name = "kernel/avx2/llama7b_prefill512/interleaved/real_time/threads:1";
  std::vector<double> fractions, rates;
  for (const auto& b : bench["benchmarks"]) {
    if (b["run_name"] == name && b["run_type"] == "iteration") {
      fractions.push_back(b["limit_fraction"].get<double>());
      rates.push_back(b["bytes_per_second"].get<double>());
    }
  }
  ASSERT_EQ(fractions.size(), 3u);
  const auto row = test::markdown_row(md(), name);
  ASSERT_EQ(row.size(), 6u) << md();
  EXPECT_EQ(row[4], fmt::format("{:.3f}", median_of(fractions)));
  EXPECT_EQ(row[3], "GB/s");
  EXPECT_EQ(row[5], "3");
  EXPECT_NEAR(std::stod(row[1]), median_of(rates) / 1e9, 0.01 * median_of(rates) / 1e9);
  // The HTML carries the same cell.
  EXPECT_NE(html().find(fmt::format("<td class=\"num\">{:.3f}</td>", median_of(fractions))), std::string::npos);
}

TEST_F(ReportFixture, VerificationTableHoldsWorstOverBoundOfTheInput) {
  ASSERT_EQ(code_, kExitOk);
  const Json verify = Json::parse(slurp(kFixture / "verify.json"));
  int checked = 0;
  for (const auto& r : verify["results"]) {
    if (r["mutant"].get<bool>() || r["worst_ratio"].is_null()) continue;
    const std::string subject = r["subject"], property = r["property"];
    const auto header = md_header_above(md(), subject);
    const auto row = test::markdown_row(md(), subject);
    const auto column = std::find(header.begin(), header.end(), property);
    ASSERT_NE(column, header.end()) << subject << " " << property;
    const double ratio = r["worst_ratio"];
    const std::string expected = r["status"].get<std::string>() + " " +
                                 (ratio == 0 ? std::string("0") : fmt::format("{:.3g}", ratio));
    EXPECT_EQ(row.at(static_cast<std::size_t>(column - header.begin())), expected) << subject << " " << property;
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

TEST_F(ReportFixture, KillMatrixSaysWhichPropertyCaughtEachMutant) {
  ASSERT_EQ(code_, kExitOk);
  const Json verify = Json::parse(slurp(kFixture / "verify.json"));
  int caught = 0;
  for (const auto& m : verify["kill_matrix"]["mutants"]) {
    const std::string mutant = m["mutant"];
    const auto header = md_header_above(md(), mutant);
    const auto row = test::markdown_row(md(), mutant);
    ASSERT_EQ(row.size(), header.size()) << mutant;
    EXPECT_EQ(row[1], m["verdict"].get<std::string>());
    for (const auto& property : m["killed_by"]) {
      const auto column = std::find(header.begin(), header.end(), property.get<std::string>());
      ASSERT_NE(column, header.end()) << property;
      EXPECT_EQ(row[static_cast<std::size_t>(column - header.begin())], "caught") << mutant << " " << property;
      ++caught;
    }
  }
  EXPECT_GT(caught, 0);
  EXPECT_NE(html().find("<td class=\"killed\">caught</td>"), std::string::npos);
}

TEST_F(ReportFixture, MachineContextAndBaselineTableAreThere) {
  ASSERT_EQ(code_, kExitOk);
  const Json bench = Json::parse(slurp(kFixture / "bench.json"));
  for (const char* key : {"ropecheck_cpu_model", "ropecheck_openblas_core", "ropecheck_cxx_flags",
                          "ropecheck_git_commit", "ropecheck_dispatched_isa"}) {
    EXPECT_NE(md().find(bench["context"][key].get<std::string>()), std::string::npos) << key;
  }
  EXPECT_NE(md().find("2000 resamples"), std::string::npos);
  // The same case is a row of the bench table too: look in the baseline section only.
  const auto at = md().find("## Against the baseline");
  ASSERT_NE(at, std::string::npos);
  const auto baseline_row = test::markdown_row(md().substr(at), "kernel/avx512/llama7b_decode_at4095/interleaved/real_time/threads:1");
  ASSERT_EQ(baseline_row.size(), 6u);
  const double ratio = std::stod(baseline_row[3]), low = std::stod(baseline_row[4]), high = std::stod(baseline_row[5]);
  EXPECT_NEAR(ratio, std::stod(baseline_row[2]) / std::stod(baseline_row[1]), 0.01);
  EXPECT_LE(low, ratio + 1e-3);
  EXPECT_GE(high, ratio - 1e-3);
}

TEST(Report, NoInputInTheDirectoryIsExit2) {
  const ScratchDir empty;
  const auto run = cli({"report", "--in", empty.path().string()});
  EXPECT_EQ(run.code, kExitUsage);
  EXPECT_NE(run.err.find("nothing to report"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(empty.path() / "report.html"));
}

TEST(Report, MalformedBenchJsonIsExit2NamingTheFile) {
  const ScratchDir dir;
  fs::copy_file(kFixture / "verify.json", dir.path() / "verify.json");
  std::ofstream(dir.path() / "bench.json") << "{\"benchmarks\": [ {\"name\": \"x\",";
  const auto run = cli({"report", "--in", dir.path().string()});
  EXPECT_EQ(run.code, kExitUsage);
  EXPECT_NE(run.err.find((dir.path() / "bench.json").string()), std::string::npos) << run.err;
}

// A run with a case at two thread counts gets the thread-sweep table: the case at 1 and 2 threads
// with its fraction of the probe at each, and the speed-up between them.
TEST(Report, ThreadSweepTableWhenACaseRanAtSeveralThreadCounts) {
  const ScratchDir dir;
  Json bench = Json::parse(slurp(kFixture / "bench.json"));
  const std::string one = "kernel/avx2/llama7b_prefill4096/interleaved/real_time/threads:1";
  const std::string two = "kernel/avx2/llama7b_prefill4096/interleaved/real_time/threads:2";
  Json added = Json::array();
  for (const auto& b : bench["benchmarks"]) {
    if (b["run_name"] != one) continue;
    Json c = b;
    c["run_name"] = two;
    c["name"] = two + c["name"].get<std::string>().substr(one.size());
    c["threads"] = 2;
    if (c.contains("bytes_per_second")) c["bytes_per_second"] = 2 * c["bytes_per_second"].get<double>();
    added.push_back(c);
  }
  ASSERT_FALSE(added.empty()) << "the fixture lost " << one;
  for (auto& c : added) bench["benchmarks"].push_back(c);
  std::ofstream(dir.path() / "bench.json") << bench.dump();
  const auto run = cli({"report", "--in", dir.path().string()});
  ASSERT_EQ(run.code, kExitOk) << run.err;
  const std::string report = slurp(dir.path() / "report.md");
  ASSERT_NE(report.find("### Thread sweep"), std::string::npos) << report;
  const auto row = test::markdown_row(report, "kernel/avx2 llama7b_prefill4096, interleaved");
  ASSERT_EQ(row.size(), 5u) << report;  // case, unit, 1 thread, 2 threads, speed-up
  EXPECT_EQ(row[1], "GB/s");
  EXPECT_EQ(row[4], "2.00");
}

TEST(Report, BaselineWithoutBenchJsonIsExit2) {
  const ScratchDir dir;
  const auto run = cli({"report", "--in", kFixture.string(), "--baseline", dir.path().string(),
                        "--out", (dir.path() / "out").string()});
  EXPECT_EQ(run.code, kExitUsage);
  EXPECT_NE(run.err.find("--baseline"), std::string::npos) << run.err;
}

TEST(Report, AReportWithoutBaselineRemovesAnEarlierBaselinePlot) {
  const ScratchDir dir;
  ReportOptions options;
  options.in_dir = kFixture;
  options.baseline_dir = kFixture / "baseline";
  options.out_dir = dir.path();
  std::ostringstream out;
  ASSERT_EQ(run_report(options, out), kExitOk);
  ASSERT_TRUE(fs::exists(dir.path() / "plots" / "baseline_ratio.svg"));
  std::ofstream(dir.path() / "plots" / "notes.txt") << "a person's file";
  options.baseline_dir.clear();
  ASSERT_EQ(run_report(options, out), kExitOk);
  EXPECT_FALSE(fs::exists(dir.path() / "plots" / "baseline_ratio.svg"));
  EXPECT_FALSE(fs::exists(dir.path() / "plots" / "baseline_ratio.gp"));
  EXPECT_TRUE(fs::exists(dir.path() / "plots" / "notes.txt"));
  EXPECT_TRUE(fs::exists(dir.path() / "plots" / "error_vs_position.svg"));
  EXPECT_EQ(slurp(dir.path() / "report.md").find("Against the baseline"), std::string::npos);
}

TEST(Report, ForeignAccuracyJsonIsExit2NamingTheFile) {
  const ScratchDir dir;
  std::ofstream(dir.path() / "accuracy.json") << R"({"schema": "ropecheck.accuracy/1", "decay": []})";
  const auto run = cli({"report", "--in", dir.path().string()});
  EXPECT_EQ(run.code, kExitUsage);
  EXPECT_NE(run.err.find("accuracy.json"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("error_vs_position"), std::string::npos) << run.err;
}

TEST(Report, LinksTheHistoryPageOnlyWhenGivenOne) {
  const ScratchDir out;
  ReportOptions options;
  options.in_dir = kFixture;
  options.out_dir = out.path();
  std::ostringstream log;
  ASSERT_EQ(run_report(options, log), kExitOk);
  EXPECT_EQ(slurp(out / "report.md").find("Performance over time"), std::string::npos);
  options.history = {"history/history.html", "(and history.md): 6 run(s) of 3 commit(s).",
                     {"kernel/avx512/x on m: -9.8% [-12.0%, -7.5%] at 0123456789ab (2026-11-25) (after ba9876543210)"}};
  ASSERT_EQ(run_report(options, log), kExitOk);
  const std::string md = slurp(out / "report.md"), html = slurp(out / "report.html");
  EXPECT_NE(md.find("## Performance over time"), std::string::npos);
  EXPECT_NE(md.find("[The history of stored runs](history/history.html) (and history.md): 6 run(s)"), std::string::npos) << md;
  EXPECT_NE(html.find("-9.8% [-12.0%, -7.5%] at 0123456789ab"), std::string::npos);
  EXPECT_NE(html.find("<a href=\"history/history.html\">The history of stored runs</a>"), std::string::npos);
  EXPECT_NE(html.find("href=\"#performance-over-time\""), std::string::npos);  // in the contents
}

TEST(Report, MissingGnuplotIsExit2WithTheInstallHint) {
  const ScratchDir dir;  // an empty PATH directory: no gnuplot anywhere
  const char* old = std::getenv("PATH");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("PATH", dir.path().c_str(), 1);
  const auto run = cli({"report", "--in", kFixture.string(), "--out", (dir.path() / "out").string()});
  ::setenv("PATH", saved.c_str(), 1);
  EXPECT_EQ(run.code, kExitUsage);
  EXPECT_NE(run.err.find("gnuplot not found: scripts/install-deps.sh installs gnuplot-nox"), std::string::npos)
      << run.err;
}

TEST(Report, GnuplotLabelsEscapeEnhancedTextAndQuotes) {
  EXPECT_EQ(gp_label("oracle_f64/scalar"), "'oracle\\_f64/scalar'");
  EXPECT_EQ(gp_label("it's {x}^2"), "'it''s \\{x\\}\\^2'");
}

TEST(Report, InlinedSvgGetsPrefixedIdsAndNoPrologOrNamespace) {
  const std::string svg =
      "<?xml version=\"1.0\"?>\n<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" \"http://www.w3.org/x.dtd\">\n"
      "<svg \n viewBox=\"0 0 10 10\"\n xmlns=\"http://www.w3.org/2000/svg\"\n xmlns:xlink=\"http://www.w3.org/1999/xlink\"\n>"
      "<defs><path id='gpPt0' d='M0 0'/></defs><use xlink:href='#gpPt0'/><g filter=\"url(#gpPt0)\"/>"
      "<a href='#elsewhere'/></svg>";
  const std::string out = inline_svg(svg, "f1-");
  EXPECT_EQ(out.rfind("<svg", 0), 0u);
  EXPECT_EQ(out.find("http"), std::string::npos);
  EXPECT_NE(out.find("id='f1-gpPt0'"), std::string::npos);
  EXPECT_NE(out.find("xlink:href='#f1-gpPt0'"), std::string::npos);
  EXPECT_NE(out.find("url(#f1-gpPt0)"), std::string::npos);
  EXPECT_NE(out.find("href='#elsewhere'"), std::string::npos);  // not an id of this SVG
}

TEST(Report, BootstrapRatioOfMediansIsFixedAndBracketsTheRatio) {
  const std::vector<double> current = {1.0, 1.1, 0.9, 1.05, 0.95}, baseline = {0.5, 0.55, 0.45};
  const auto a = bootstrap_median_ratio(current, baseline);
  const auto b = bootstrap_median_ratio(current, baseline);
  EXPECT_DOUBLE_EQ(a.ratio, 2.0);
  EXPECT_EQ(a.low, b.low);  // fixed seed: the same interval every time
  EXPECT_EQ(a.high, b.high);
  EXPECT_LE(a.low, a.ratio);
  EXPECT_GE(a.high, a.ratio);
  EXPECT_GT(a.low, 1.5);
  const std::vector<double> same = {2.0, 2.0, 2.0};
  const auto c = bootstrap_median_ratio(same, same);
  EXPECT_EQ(c.ratio, 1.0);
  EXPECT_EQ(c.low, 1.0);
  EXPECT_EQ(c.high, 1.0);
}

}  // namespace
}  // namespace ropecheck
