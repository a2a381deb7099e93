// verdict_text() (verdict_text.h): the console's summary of a run.
#include "reports/verdict_text.h"

#include <fmt/format.h>

#include <algorithm>

namespace ropecheck {
namespace {

// Caps that keep the summary on one screen whatever breaks: the rest is in verify.json, the
// report and the main job's log.
constexpr std::size_t kConsoleFailures = 8;
constexpr std::size_t kConsoleSkipReasons = 3;
constexpr std::size_t kConsoleSubjects = 2;   // per skip reason
constexpr std::size_t kConsoleSurvivors = 8;  // a surviving mutant is a gap in the catalogue: name it

std::string plural(std::size_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string headline_verdict(const VerdictSummary& s) {
  if (!s.has_verify) return "Verdict: none (no verify.json)";
  std::vector<std::string> why;
  if (!s.failures.empty()) why.push_back(plural(s.failures.size(), "failure", "failures") + " on real implementations");
  if (!s.survivors.empty()) why.push_back(plural(s.survivors.size(), "mutant", "mutants") + " survived");
  if (why.empty()) {
    return fmt::format("Verdict: PASSED: every real implementation passed{}",
                       s.has_mutants ? ", every mutant was killed" : "");
  }
  std::string text = "Verdict: FAILED: ";
  for (std::size_t i = 0; i < why.size(); ++i) text += (i ? "; " : "") + why[i];
  return text;
}

std::string console_subjects(const std::vector<std::string>& subjects, std::size_t named = kConsoleSubjects) {
  std::string out;
  for (std::size_t i = 0; i < std::min(subjects.size(), named); ++i) out += (i ? ", " : "") + subjects[i];
  if (subjects.size() > named) out += fmt::format(" and {} more", subjects.size() - named);
  return out;
}

// "  <head>: <reason><tail>", the reason cut so that the line fits.
std::string reason_line(const std::string& head, const std::string& reason, const std::string& tail = "") {
  const std::size_t fixed = head.size() + 2 + tail.size();
  const std::size_t room = fixed < kConsoleColumns ? kConsoleColumns - fixed : 0;
  return head + ": " + cut_to_columns(reason, room) + tail + "\n";
}

}  // namespace

std::string cut_to_columns(const std::string& line, std::size_t columns) {
  if (line.size() <= columns) return line;
  std::size_t keep = columns < 3 ? columns : columns - 3;
  // Never inside a UTF-8 sequence (a reason may hold one): back to the start of its character.
  while (keep > 0 && (static_cast<unsigned char>(line[keep]) & 0xC0u) == 0x80u) --keep;
  return line.substr(0, keep) + (columns < 3 ? "" : "...");
}

std::string wrap_to_columns(const std::string& text, std::size_t columns) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    std::string line = text.substr(start, end - start);
    const std::size_t indent = line.find_first_not_of(' ') == std::string::npos ? 0 : line.find_first_not_of(' ');
    while (line.size() > columns) {
      const std::size_t space = line.rfind(' ', columns);
      if (space == std::string::npos || space <= indent + 4) break;
      out += line.substr(0, space) + "\n";
      line = std::string(indent + 4, ' ') + line.substr(space + 1);
    }
    out += cut_to_columns(line, columns);
    if (end < text.size()) out += "\n";
    start = end + 1;
  }
  return out;
}

std::string format_limit(double fraction) { return fmt::format("{:.3f}", fraction); }

std::string format_times(double ratio) {
  return ratio >= 10 ? fmt::format("{:.0f}x", ratio) : fmt::format("{:.2g}x", ratio);
}

std::string verdict_text(const VerdictSummary& s) {
  std::string out = headline_verdict(s) + "\n";
  if (s.has_verify) {
    out += fmt::format("Real implementations: {} passed, {} failed, {} skipped{}\n", s.passed, s.failed, s.skipped,
                       s.mistrusted > 0 ? fmt::format(", {} MISTRUSTED (passed on cases that prove nothing)", s.mistrusted) : "");
    for (std::size_t i = 0; i < std::min(s.failures.size(), kConsoleFailures); ++i) {
      const FailedCheck& f = s.failures[i];
      out += reason_line(fmt::format("  {} {} {}", f.status, f.subject, f.property), f.reason);
    }
    if (s.failures.size() > kConsoleFailures) {
      out += fmt::format("  and {} more failures (verify.json, report.html)\n", s.failures.size() - kConsoleFailures);
    }
    if (s.has_mutants) {
      out += fmt::format("Mutants: {} of {} killed{}\n", s.mutants_killed, s.mutants,
                         s.survivors.empty() ? "" : "; SURVIVED: " + console_subjects(s.survivors, kConsoleSurvivors));
    }
  }
  if (!s.kernels.empty()) {
    out += fmt::format("Kernels against the same-run limit (1 = the limit; each shape at its fastest level; {} bench "
                       "cases){}:\n",
                       s.bench_cases,
                       s.sanitized               ? " [ASan+UBSan build: not representative]"
                       : !s.emulated_on.empty() ? fmt::format(" [EMULATED on {}: the emulator's speeds, not an aarch64 "
                                                              "CPU's]", s.emulated_on)
                                                : "");
    std::vector<std::string> groups;
    std::size_t width = 0;
    for (const KernelHeadline& k : s.kernels) {
      groups.push_back(fmt::format("{} ({}):", k.group, plural(k.cases, "case", "cases")));
      width = std::max(width, groups.back().size());
    }
    for (std::size_t i = 0; i < s.kernels.size(); ++i) {
      const KernelHeadline& k = s.kernels[i];
      out += fmt::format("  {:<{}}  best {} {}\n", groups[i], width, format_limit(k.best.value), k.best.label);
      out += fmt::format("  {:<{}}  worst {} {}\n", "", width, format_limit(k.worst.value), k.worst.label);
    }
  }
  if (!s.peers.empty()) {
    // One line, wrapped at the end like every line here.
    out += "Peers (outside code: what they fail is a finding, not a failure of this run; speed: the fastest own "
           "kernel's rate over theirs; attention: attention_blas's fraction of its sgemm probe over theirs, its GFLOP/s "
           "at more than one thread):\n";
    for (const PeerVerdict& p : s.peers) {
      // One line a peer: with the shapes of its speed's range where they fit, else the range alone
      // (the shapes are in report.html): eight peers wrapped to two lines each passed a screen.
      const auto line = [&](bool with_shapes) {
        std::string speed;
        if (p.lowest_ratio && p.highest_ratio) {
          const auto shape = [&](const CaseValue& c) { return with_shapes ? fmt::format(" ({})", c.label) : ""; };
          speed = p.shapes == 1 ? fmt::format("; speed {}{}", format_times(p.lowest_ratio->value), shape(*p.lowest_ratio))
                                : fmt::format("; speed {}{} to {}{}", format_times(p.lowest_ratio->value),
                                              shape(*p.lowest_ratio), format_times(p.highest_ratio->value),
                                              shape(*p.highest_ratio));
          if (!with_shapes) speed += p.shapes == 1 ? " (its shape: report.html)" : " (the shapes: report.html)";
        }
        return fmt::format("  {}: {} passed, {} failed, {} skipped{}{}\n", p.peer, p.passed, p.failed, p.skipped, speed,
                           p.timed_failing ? " (timed despite a failed check)" : "");
      };
      const std::string full = line(true);
      out += full.size() - 1 <= kConsoleColumns ? full : line(false);
      if (!p.findings.empty()) {
        out += reason_line(fmt::format("    finding: {}", p.findings.front().property), p.findings.front().reason,
                           p.findings.size() == 1 ? "" : fmt::format(" (and {} more: report.html)", p.findings.size() - 1));
      }
    }
  }
  if (!s.skips.empty()) {
    int results = 0;
    for (const SkipGroup& g : s.skips) results += g.results;
    out += fmt::format("Skipped: {}{}\n", plural(static_cast<std::size_t>(results), "result", "results"),
                       s.isa_levels.empty() ? "" : fmt::format(" (kernel levels this CPU runs: {})", s.isa_levels));
    for (std::size_t i = 0; i < std::min(s.skips.size(), kConsoleSkipReasons); ++i) {
      const SkipGroup& g = s.skips[i];
      out += fmt::format("  {}: {} ({})\n", g.reason, g.results, console_subjects(g.subjects));
    }
    if (s.skips.size() > kConsoleSkipReasons) {
      out += fmt::format("  and {} (verify.json)\n", plural(s.skips.size() - kConsoleSkipReasons, "more reason", "more reasons"));
    }
  }
  return wrap_to_columns(out);
}

}  // namespace ropecheck
