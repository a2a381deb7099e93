// The verdict summary (reports/verdict.h) from the report fixture's files, and its two renderings:
// the report opens with it and names a failed real implementation there, the machine table comes
// last; the console's text (what the main job ends with) names the failures and stays on one
// screen however much fails. In process, without gnuplot: build_report with no figures.
//   build/tests/reports_tests --gtest_filter='Verdict*'
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/format/case_name.h"
#include "reports/content.h"
#include "reports/data.h"
#include "reports/verdict.h"
#include "reports/verdict_text.h"
#include "reports/writer.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;

ReportInputs verdict_fixture() { return read_report_inputs(ROPECHECK_REPORT_FIXTURE, ""); }

// The Markdown between the heading `title` and the next level-2 heading.
std::string md_section(const std::string& md, const std::string& title) {
  const auto at = md.find("## " + title + "\n");
  if (at == std::string::npos) return "";
  const auto end = md.find("\n## ", at + 1);
  return md.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

std::size_t line_count(const std::string& text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')); }

// The fixture with kernel/avx2's oracle_agreement FAILED, as a real failure reads in verify.json.
ReportInputs with_failed_kernel() {
  ReportInputs in = verdict_fixture();
  for (auto& r : in.verify->results) {
    if (r.subject == "kernel/avx2" && r.property == "oracle_agreement") {
      r.status = "FAILED";
      r.message = "q: error 7.7e+06 > bound 2 (eps32*|pair|) at token 0 head 0 feature 1\nsecond line of the message";
      r.counterexample = "tokens=1 heads=1 positions=[0]";
    }
  }
  return in;
}

TEST(Verdict, TheFixturePassesAndItsHeadlinesAreItsCasesMedians) {
  const ReportInputs in = verdict_fixture();
  const VerdictSummary s = summarize_verdict(in);
  EXPECT_TRUE(s.passed_all());
  EXPECT_EQ(s.passed, 14);
  EXPECT_EQ(s.failed, 0);
  EXPECT_EQ(s.mutants, 3);
  EXPECT_EQ(s.mutants_killed, 3);
  ASSERT_FALSE(s.kernels.empty());
  // The fp32 kernels: the best is the best case of any level; the worst is the shape whose
  // fastest level is slowest.
  double best = 0;
  std::map<std::string, double> fastest_per_shape;
  for (const CaseRecord& c : in.bench->records) {
    if (!c.rope || c.rope->impl.rfind("kernel/", 0) != 0 || !c.rate.limit_fraction) continue;
    best = std::max(best, *c.rate.limit_fraction);
    double& f = fastest_per_shape[c.rope->shape + c.rope->layout];
    f = std::max(f, *c.rate.limit_fraction);
  }
  double worst = 2;
  for (const auto& [_, f] : fastest_per_shape) worst = std::min(worst, f);
  const KernelHeadline& fp32 = s.kernels.front();
  EXPECT_EQ(fp32.group, "RoPE fp32 kernels");
  EXPECT_EQ(fp32.cases, static_cast<int>(fastest_per_shape.size()));
  EXPECT_DOUBLE_EQ(fp32.best.value, best);
  EXPECT_DOUBLE_EQ(fp32.worst.value, worst);
  EXPECT_NE(fp32.best.label.find("kernel/"), std::string::npos) << fp32.best.label;
  EXPECT_EQ(s.isa_levels, "scalar avx2 avx512");
}

TEST(Verdict, TheReportOpensWithTheSummaryAndKeepsTheMachineForLast) {
  const std::string md = render_markdown(build_report(verdict_fixture(), {}));
  const auto first = md.find("\n## ");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(md.substr(first + 1, 11), "## Summary\n") << md.substr(0, 400);
  const std::string summary = md_section(md, "Summary");
  EXPECT_NE(summary.find("PASSED: 14 passed, 0 failed"), std::string::npos) << summary;
  EXPECT_NE(summary.find("3 of 3 killed"), std::string::npos) << summary;
  EXPECT_NE(summary.find("RoPE fp32 kernels"), std::string::npos) << summary;
  EXPECT_NE(summary.find("scalar avx2 avx512"), std::string::npos) << summary;  // what this CPU runs
  const auto machine = md.find("\n## Machine and build\n");
  ASSERT_NE(machine, std::string::npos);
  EXPECT_GT(machine, md.find("\n## Verification\n"));
  EXPECT_GT(machine, md.find("\n## Performance\n"));
  EXPECT_EQ(md.find("\n## ", machine + 1), std::string::npos) << "the machine section is the last";
  // In the HTML too: the first section after the table of contents is the summary.
  const std::string html = render_html(build_report(verdict_fixture(), {}));
  const auto h2 = html.find("<h2");
  ASSERT_NE(h2, std::string::npos);
  EXPECT_EQ(html.compare(h2, 19, "<h2 id=\"summary\">Su"), 0) << html.substr(h2, 60);
}

TEST(Verdict, AFailedRealImplementationIsNamedWithItsReasonInTheReportsFirstSection) {
  const ReportInputs in = with_failed_kernel();
  const VerdictSummary s = summarize_verdict(in);
  EXPECT_FALSE(s.passed_all());
  ASSERT_EQ(s.failures.size(), 1u);
  EXPECT_EQ(s.failures[0].subject, "kernel/avx2");
  EXPECT_EQ(s.failures[0].reason, "q: error 7.7e+06 > bound 2 (eps32*|pair|) at token 0 head 0 feature 1");
  const std::string summary = md_section(render_markdown(build_report(in, {})), "Summary");
  EXPECT_NE(summary.find("FAILED: 13 passed, 1 failed"), std::string::npos) << summary;
  EXPECT_NE(summary.find("`kernel/avx2`"), std::string::npos) << summary;
  EXPECT_NE(summary.find("`oracle_agreement`: q: error 7.7e+06"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("second line"), std::string::npos) << "one line per failure";
  const std::string html = render_html(build_report(in, {}));
  const auto failed = html.find("<code>kernel/avx2</code>");
  ASSERT_NE(failed, std::string::npos);
  EXPECT_LT(failed, html.find("<h2 id=\"verification\""));
  // And on the console: the verdict first, the failure named with its reason.
  const std::string text = verdict_text(s);
  EXPECT_EQ(text.rfind("Verdict: FAILED: 1 failure on real implementations", 0), 0u) << text;
  EXPECT_NE(text.find("FAILED kernel/avx2 oracle_agreement: q: error 7.7e+06"), std::string::npos) << text;
}

TEST(Verdict, PeersAreJudgedApartWithTheirFindingAndSpeed) {
  ReportInputs in = verdict_fixture();
  VerifyResultRow finding;
  finding.subject = "plugin/ggml";
  finding.property = "identity_at_zero";
  finding.status = "FAILED";
  finding.message = "R_0 changed q: got -0, want 0";
  in.verify->results.push_back(finding);
  // The peer timed on a shape the fixture's kernels ran, at a quarter of kernel/avx512's rate.
  const std::string kernel = "kernel/avx512/llama7b_prefill512/interleaved/real_time/threads:1";
  BenchCase peer = in.bench->cases.at(kernel);
  peer.name = "plugin/ggml/llama7b_prefill512/interleaved/threads:1/manual_time";
  for (auto& rate : peer.counters.at("bytes_per_second")) rate /= 4;
  add_case(*in.bench, peer);
  const VerdictSummary s = summarize_verdict(in);
  EXPECT_TRUE(s.passed_all()) << "a peer's failure is a finding, not the run's";
  ASSERT_EQ(s.peers.size(), 1u);
  EXPECT_EQ(s.peers[0].failed, 1);
  ASSERT_TRUE(s.peers[0].lowest_ratio.has_value());
  EXPECT_NEAR(s.peers[0].lowest_ratio->value, 4.0, 0.5);  // the fastest kernel there may be avx2
  const std::string text = verdict_text(s);
  EXPECT_NE(text.find("plugin/ggml: 0 passed, 1 failed, 0 skipped; speed"), std::string::npos) << text;
  EXPECT_NE(text.find("finding: identity_at_zero: R_0 changed q"), std::string::npos) << text;
}

// No console line a terminal would wrap (issue 55): a counterexample in full runs past 250
// columns; it is cut with "..." (its whole text is in verify.json and the log), keeping what
// follows it on the line, and any other long line is broken at a space.
TEST(Verdict, EveryConsoleLineFitsATerminalWithTheReasonsCutAndTheirTailsKept) {
  VerdictSummary s;
  s.has_verify = true;
  const std::string counterexample =
      "q: error 7.718e+06 > bound 4.5 (eps32*|pair|) at token 0 head 0 feature 0 (pair 0, position 1, theta 1): got 1, "
      "want -0.3011686789397568; spec: head_dim 128, rotary_dim 128, base 10000, layout interleaved, tokens 4096";
  s.failures.push_back({"kernel_bf16/avx512bf16", "backward_oracle_agreement", "FAILED", counterexample});
  PeerVerdict peer;
  peer.peer = "plugin/torch_meta_llama_complex";
  peer.passed = 14;
  peer.failed = 2;
  peer.skipped = 7;
  peer.findings = {{peer.peer, "oracle_agreement", "FAILED", counterexample}, {peer.peer, "inverse", "FAILED", "x"}};
  peer.shapes = 2;
  peer.lowest_ratio = CaseValue{"qwen2vl_7b_mrope_prefill512 interleaved", 5.2};
  peer.highest_ratio = CaseValue{"llama7b_decode_at4095 half_split", 161};
  s.peers.push_back(peer);
  const std::string text = verdict_text(s);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), kConsoleColumns) << line;
  EXPECT_NE(text.find("  FAILED kernel_bf16/avx512bf16 backward_oracle_agreement: q: error 7.718e+06 > bound 4.5"),
            std::string::npos) << text;
  EXPECT_NE(text.find("...\n"), std::string::npos) << text;
  EXPECT_NE(text.find("... (and 1 more: report.html)\n"), std::string::npos) << text;
  // The speed's range is all there on the peer's one line; its shapes, which would not fit, are
  // left to the report.
  EXPECT_NE(text.find("161x (the shapes: report.html)\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("llama7b_decode_at4095 half_split"), std::string::npos) << text;
  EXPECT_EQ(text.find("spec: head_dim"), std::string::npos) << "the cut part stays in the files:\n" << text;
}

TEST(Verdict, WrapBreaksAtASpaceAndCutsWhatHasNone) {
  EXPECT_EQ(wrap_to_columns("  abc def ghi\n", 10), "  abc def\n      ghi\n");
  EXPECT_EQ(wrap_to_columns("short\n", 10), "short\n");
  EXPECT_EQ(wrap_to_columns("abcdefghijklmno\n", 10), "abcdefg...\n");
  EXPECT_EQ(cut_to_columns("abcdefghij", 10), "abcdefghij");
  EXPECT_EQ(cut_to_columns("abcdefghijk", 10), "abcdefg...");
  EXPECT_EQ(cut_to_columns("abcdef\xce\xb8xyz", 10), "abcdef...");  // not inside theta's two bytes
}

// An attention peer: its verify counts and finding as a RoPE peer's, its speed attention_blas's
// fraction of the sgemm probe over its own, per problem; never in ropecheck's own attention line.
TEST(Verdict, AnAttentionPeerIsJudgedApartWithItsSpeedAgainstAttentionBlas) {
  ReportInputs in = verdict_fixture();
  VerifyResultRow finding;
  finding.subject = "plugin/ggml_flash_attn";
  finding.property = "attention_equal_scores_average";
  finding.status = "FAILED";
  finding.message = "33 tokens, every score 0: output 0 (token 0) = 1.1117425";
  in.verify->results.push_back(finding);
  const auto add = [&](const bench::AttentionCaseName& name, double fraction) {
    BenchCase c;
    c.name = bench::full_name(name);
    c.real_time_ns = {1e6, 1e6, 1e6};
    c.counters["flops"] = {2e10, 2e10, 2e10};
    c.limit_fraction = {fraction, fraction, fraction};
    add_case(*in.bench, c);
  };
  add({8, 512, 128, 1}, 0.66);
  add({8, 512, 128, 1, bench::AttentionRope::none, 8, "plugin/ggml_flash_attn"}, 1.1);
  add({8, 512, 128, 1, bench::AttentionRope::none, 2}, 0.5);
  add({8, 512, 128, 1, bench::AttentionRope::none, 2, "plugin/ggml_flash_attn"}, 1.25);
  const VerdictSummary s = summarize_verdict(in);
  EXPECT_TRUE(s.passed_all()) << "a peer's failure is a finding, not the run's";
  const auto peer = std::find_if(s.peers.begin(), s.peers.end(), [](const PeerVerdict& p) {
    return p.peer == "plugin/ggml_flash_attn";
  });
  ASSERT_NE(peer, s.peers.end());
  EXPECT_EQ(peer->failed, 1);
  EXPECT_EQ(peer->shapes, 2);
  EXPECT_EQ(peer->lowest_ratio->label, "tokens:512 2kv");
  EXPECT_DOUBLE_EQ(peer->lowest_ratio->value, 0.5 / 1.25);
  EXPECT_EQ(peer->highest_ratio->label, "tokens:512");
  const auto attention = std::find_if(s.kernels.begin(), s.kernels.end(), [](const KernelHeadline& k) {
    return k.group == "attention against sgemm";
  });
  ASSERT_NE(attention, s.kernels.end());
  EXPECT_EQ(attention->best.label.find("ggml"), std::string::npos) << attention->best.label;
  const std::string text = verdict_text(s);
  EXPECT_NE(text.find("plugin/ggml_flash_attn: 0 passed, 1 failed, 0 skipped; speed"), std::string::npos) << text;
  EXPECT_NE(text.find("finding: attention_equal_scores_average: 33 tokens"), std::string::npos) << text;
}

// However much fails, the console summary stays on one screen (the main job adds 3-4 lines of
// paths), and each cap says how many it left out.
TEST(Verdict, TheConsoleSummaryStaysOnOneScreenWhateverFails) {
  VerdictSummary s;
  s.has_verify = s.has_bench = s.has_mutants = true;
  for (int i = 0; i < 50; ++i) s.failures.push_back({fmt::format("kernel/level{}", i), "oracle_agreement", "FAILED", "why"});
  s.failed = 50;
  s.mutants = 22;
  for (int i = 0; i < 12; ++i) s.survivors.push_back(fmt::format("mutant/bug{}", i));
  s.mutants_killed = 10;
  for (const char* group : {"RoPE fp32 kernels", "RoPE 16-bit kernels", "attention against sgemm"}) {
    s.kernels.push_back({group, 5, {"best case", 0.9}, {"worst case", 0.1}});
  }
  for (int p = 0; p < 4; ++p) {
    PeerVerdict peer;
    peer.peer = fmt::format("plugin/peer{}", p);
    for (int f = 0; f < 6; ++f) peer.findings.push_back({peer.peer, fmt::format("property{}", f), "FAILED", "why"});
    peer.failed = 6;
    peer.shapes = 3;
    peer.lowest_ratio = CaseValue{"shape a", 1.5};
    peer.highest_ratio = CaseValue{"shape b", 40};
    s.peers.push_back(peer);
  }
  for (int r = 0; r < 9; ++r) s.skips.push_back({fmt::format("reason {}", r), 14, {"kernel/avx512", "kernel_bf16/avx512"}});
  const std::string text = verdict_text(s);
  EXPECT_LE(line_count(text) + 4, 40u) << text;
  EXPECT_NE(text.find("and 42 more failures"), std::string::npos) << text;
  EXPECT_NE(text.find("SURVIVED: mutant/bug0"), std::string::npos) << text;
  EXPECT_NE(text.find("and 6 more reasons"), std::string::npos) << text;
  EXPECT_NE(text.find("(and 5 more: report.html)"), std::string::npos) << text;
}

}  // namespace
}  // namespace ropecheck
