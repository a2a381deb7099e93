// verdict_section() (verdict_section.h): the summary at the top of the report, one row a fact.
#include "reports/verdict_section.h"

#include <fmt/format.h>

#include <algorithm>

#include "reports/verdict_text.h"

namespace ropecheck {
namespace {

// Few rows, one line each: the sections below hold every failure and skip; these keep the table
// within the first screen of report.html (1280 x 800) however much fails.
constexpr std::size_t kTableFailures = 3;
constexpr std::size_t kCellReasonChars = 110;
constexpr std::size_t kTableSkipReasons = 3;
constexpr std::size_t kCellSubjects = 2;

// A message as cell text, clipped to a line: a backtick in it would open a code span.
std::string cell_text(std::string text) {
  std::replace(text.begin(), text.end(), '`', '\'');
  if (text.size() > kCellReasonChars) text = text.substr(0, kCellReasonChars - 3) + "...";
  return text;
}

std::string code_span(const std::string& text) { return "`" + text + "`"; }

std::string cell_subjects(const std::vector<std::string>& subjects) {
  std::string out;
  for (std::size_t i = 0; i < std::min(subjects.size(), kCellSubjects); ++i) out += (i ? ", " : "") + code_span(subjects[i]);
  if (subjects.size() > kCellSubjects) out += fmt::format(" and {} more", subjects.size() - kCellSubjects);
  return out;
}

void verify_rows(Table& t, const VerdictSummary& s) {
  const bool ok = s.failures.empty();
  t.rows.push_back({{"real implementations", ""},
                    {fmt::format("{}: {} passed, {} failed, {} skipped{}", ok ? "PASSED" : "FAILED", s.passed, s.failed,
                                 s.skipped, s.mistrusted > 0 ? fmt::format(", {} MISTRUSTED", s.mistrusted) : ""),
                     ok ? "pass" : "fail"}});
  for (std::size_t i = 0; i < std::min(s.failures.size(), kTableFailures); ++i) {
    const FailedCheck& f = s.failures[i];
    t.rows.push_back({{fmt::format("{} {}", f.status, code_span(f.subject)), "fail"},
                      {fmt::format("{}: {}", code_span(f.property), cell_text(f.reason)), ""}});
  }
  if (s.failures.size() > kTableFailures) {
    const std::size_t more = s.failures.size() - kTableFailures;
    t.rows.push_back({{"", ""}, {fmt::format("and {} more failure{}: Verification, below", more, more == 1 ? "" : "s"), ""}});
  }
  if (s.has_mutants) {
    const bool all = s.survivors.empty();
    std::string survivors;
    for (const auto& m : s.survivors) survivors += (survivors.empty() ? "" : ", ") + code_span(m);
    t.rows.push_back({{"mutants", ""},
                      {fmt::format("{} of {} killed{}", s.mutants_killed, s.mutants, all ? "" : "; SURVIVED: " + survivors),
                       all ? "pass" : "survived"}});
  }
}

void performance_rows(Table& t, const VerdictSummary& s) {
  for (const KernelHeadline& k : s.kernels) {
    t.rows.push_back({{fmt::format("{} ({} cases)", k.group, k.cases), ""},
                      {fmt::format("best {} {}, worst {} {}{}", format_limit(k.best.value), code_span(k.best.label),
                                   format_limit(k.worst.value), code_span(k.worst.label),
                                   s.sanitized ? " (ASan+UBSan build: not representative)" : ""),
                       ""}});
  }
  for (const PeerVerdict& p : s.peers) {
    std::string text = fmt::format("{} passed, {} failed, {} skipped", p.passed, p.failed, p.skipped);
    if (!p.findings.empty()) {
      text += fmt::format(" (finding: {}: {}{})", code_span(p.findings.front().property), cell_text(p.findings.front().reason),
                          p.findings.size() == 1 ? "" : fmt::format("; {} more below", p.findings.size() - 1));
    }
    if (p.lowest_ratio && p.highest_ratio) {
      text += p.shapes == 1 ? fmt::format("; speed {} ({})", format_times(p.lowest_ratio->value), p.lowest_ratio->label)
                            : fmt::format("; speed {} ({}) to {} ({})", format_times(p.lowest_ratio->value),
                                          p.lowest_ratio->label, format_times(p.highest_ratio->value),
                                          p.highest_ratio->label);
    }
    if (p.timed_failing) text += "; timed although it failed its check";
    t.rows.push_back({{"peer " + code_span(p.peer), p.findings.empty() ? "" : "killed"}, {text, ""}});
  }
}

void skip_row(Table& t, const VerdictSummary& s) {
  if (s.skips.empty() && s.isa_levels.empty()) return;
  int results = 0;
  std::string reasons;
  for (const SkipGroup& g : s.skips) results += g.results;
  for (std::size_t i = 0; i < std::min(s.skips.size(), kTableSkipReasons); ++i) {
    const SkipGroup& g = s.skips[i];
    reasons += fmt::format("; {} ({}: {})", cell_text(g.reason), g.results, cell_subjects(g.subjects));
  }
  if (s.skips.size() > kTableSkipReasons) {
    const std::size_t more = s.skips.size() - kTableSkipReasons;
    reasons += fmt::format("; {} more reason{}: Verification, below", more, more == 1 ? "" : "s");
  }
  t.rows.push_back({{"skipped on this CPU", "skip"},
                    {fmt::format("{} results{}{}", results, reasons,
                                 s.isa_levels.empty() ? "" : fmt::format("; kernel levels this CPU runs: {}", s.isa_levels)),
                     ""}});
}

}  // namespace

void verdict_section(ReportDoc& doc, const VerdictSummary& s, const ReportHistoryLink& history) {
  doc.blocks.emplace_back(Heading{2, "Summary"});
  Table t{{"what", "found"}, {false, false}, {}};
  if (s.has_verify) verify_rows(t, s);
  performance_rows(t, s);
  skip_row(t, s);
  if (!history.page.empty()) {
    t.rows.push_back({{"performance over time", ""},
                      {fmt::format("{} step(s) marked: Performance over time, below", history.steps.size()), ""}});
  }
  doc.blocks.emplace_back(std::move(t));
  if (s.kernels.empty() && s.peers.empty()) return;
  doc.blocks.emplace_back(Paragraph{
      "Kernels: each case's throughput as a fraction of the same-run limit (copy bandwidth over the same bytes for "
      "RoPE, sgemm for attention; 1 is the limit), each shape at the fastest level measured. A peer's speed: the fastest own fp32 kernel's rate over the peer's on the same shape, layout and threads (above 1: "
      "ropecheck is faster); an attention peer's: attention_blas's fraction of its sgemm probe over the peer's, same "
      "problem and threads (at more than one thread, its GFLOP/s over the peer's)."});
}

}  // namespace ropecheck
