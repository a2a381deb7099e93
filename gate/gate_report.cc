// print_gate_table(), gate_markdown() and gate_summary_line() (gate_report.h, gate_result.h).
#include "gate/gate_report.h"

#include <fmt/format.h>

#include <ostream>

#include "core/exit_codes.h"
#include "core/text_table.h"
#include "gate/counted_report.h"
#include "gate/gated_cases.h"

namespace ropecheck {
namespace {

std::string percent(double ratio) { return fmt::format("{:+.1f}%", 100 * (ratio - 1)); }

std::string interval(const CaseVerdict& v) {
  return fmt::format("[{}, {}]", percent(v.ratio_low), percent(v.ratio_high));
}

std::string verdict_text(const CaseVerdict& v) {
  return v.verdict == GateVerdict::flagged ? "flagged (not gated)" : std::string(to_string(v.verdict));
}

std::string measure_text(const GateResult& r) {
  switch (r.measure_rule) {
    case MeasureRule::time: return "real time";
    case MeasureRule::limit: return "time / same-run probe time";
    case MeasureRule::automatic: break;
  }
  return fmt::format("each case's MEASURE (time: real time; limit: time / same-run probe time; the "
                     "one that spread less over {} pilot rounds)", r.pilot_rounds.size());
}

std::string overall(int exit_code) {
  switch (exit_code) {
    case 0: return "PASS";
    case 1: return "REGRESSION";
    default: return "INCONCLUSIVE";
  }
}

}  // namespace

std::string resolve_advice(const CaseVerdict& v) {
  const std::string rounds =
      v.rounds_needed ? fmt::format("needs ~{} rounds at this noise", *v.rounds_needed)
                      : fmt::format("no round count up to {} resolves it (the ratio sits on the "
                                    "threshold)", kMaxRoundsAdvised);
  return fmt::format("{}, or passes at --threshold {:.1f}", rounds,
                     std::max(0.1, v.threshold_to_pass_percent + 0.05));
}

int combined_exit_code(const GateResult& r) {
  const int timed = r.timed_ran ? r.judgement.exit_code : kExitOk;
  const int counted = r.counted.ran ? r.counted.judgement.exit_code : kExitOk;
  if (timed == kExitFailed || counted == kExitFailed) return kExitFailed;
  if (timed == kExitInconclusive || counted == kExitInconclusive) return kExitInconclusive;
  return kExitOk;
}

std::string gate_summary_line(const GateResult& r) {
  const auto& j = r.judgement;
  std::string line = "gate: ";
  if (r.counted.ran) {
    const auto& c = r.counted.judgement;
    line += fmt::format("counted: {} REGRESSION, {} INCONCLUSIVE, {} PASS of {} case(s) on estimated cycles, "
                        "threshold {}%{}", c.regressions, c.inconclusive, c.passed, c.cases.size(),
                        r.counted.plan.threshold_percent, r.timed_ran ? "; timed: " : "; ");
  }
  if (r.timed_ran) {
    line += fmt::format(
        "{} REGRESSION, {} INCONCLUSIVE, {} PASS of {} gated case(s), {} flagged; {} rounds, "
        "ratio current/base of {}, paired t on log ratios trimmed {:.0f}% per end, Holm alpha {}, "
        "threshold {}%; ",
        j.regressions, j.inconclusive, j.passed, j.gated, j.cases.size() - j.gated,
        r.rounds.size(), measure_text(r), 100 * r.settings.trim, r.settings.alpha,
        r.settings.threshold_percent);
  }
  return line + fmt::format("{:.0f} s -> {} (exit {})", r.seconds, overall(combined_exit_code(r)), combined_exit_code(r));
}

void print_gate_table(const GateResult& r, std::ostream& out) {
  if (r.counted.ran) {
    print_counted_table(r.counted.judgement, r.counted.why, out);
    out << counted_legend(r.counted.base, r.counted.plan.threshold_percent, r.counted.plan.calls);
    if (!r.counted.plan.isa_note.empty() && r.timed_ran) {
      out << "note: the timed cases below run at this CPU's own fastest level: its AVX-512 code is judged there\n";
    }
    if (!r.timed_ran) {
      for (const auto& note : r.notes) out << "note: " << note << "\n";
      return;
    }
    out << "\n";
  }
  using A = TextTable::Align;
  TextTable table({"CASE", "MEASURE", "ROUNDS", "NOISE (CV)", "DETECTABLE", "CHANGE", "INTERVAL", "VERDICT"},
                  {A::left, A::left, A::right, A::right, A::right, A::right, A::left, A::left});
  for (std::size_t i = 0; i < r.judgement.cases.size(); ++i) {
    const auto& v = r.judgement.cases[i];
    table.add_row({v.name, std::string(to_string(r.series[i].measure)), std::to_string(v.rounds),
                   fmt::format("{:.1f}%", v.noise_percent),
                   fmt::format(">= {:.1f}%", v.detectable_percent), percent(v.ratio), interval(v),
                   verdict_text(v)});
    if (v.verdict == GateVerdict::inconclusive) table.add_note("    " + resolve_advice(v));
    if (v.verdict == GateVerdict::flagged) table.add_note("    " + v.flagged);
    if (r.counted.ran) table.add_note("    " + route_case(v.name).why);
  }
  table.print(out);
  for (const auto& note : r.notes) out << "note: " << note << "\n";
  out << fmt::format("CHANGE: trimmed geometric mean over the rounds of current/base - 1, of {} (+ is "
                     "slower). INTERVAL: lower bound Holm-adjusted, upper at alpha. DETECTABLE: "
                     "the slowdown caught with ~80% probability at this noise and K.\n",
                     measure_text(r));
}

std::string gate_markdown(const GateResult& r) {
  const auto& j = r.judgement;
  const int exit_code = combined_exit_code(r);
  const char* icon = exit_code == 0 ? "✅" : exit_code == 1 ? "❌" : "⚠️";
  std::string md = fmt::format("### {} ropecheck gate: {}\n\n", icon, overall(exit_code));
  if (r.counted.ran) {
    const auto& c = r.counted.judgement;
    md += fmt::format("Counted: {} REGRESSION, {} INCONCLUSIVE, {} PASS of {} case(s) on estimated cycles "
                      "({}), threshold {}%.\n\n| case | measure | change | counts | verdict |\n|---|---|---:|---|---|\n",
                      c.regressions, c.inconclusive, c.passed, c.cases.size(), r.counted.base.model.formula(),
                      r.counted.plan.threshold_percent);
    md += counted_markdown_rows(c);
    if (!r.counted.plan.isa_note.empty()) md += "\n" + r.counted.plan.isa_note + ".\n";
    if (!r.timed_ran) return md + fmt::format("\n<sub>{}; {:.0f} s.</sub>\n", r.cpu_model, r.seconds);
    md += "\nTimed (working sets beyond the simulated last level):\n\n";
  }
  md += fmt::format("{} REGRESSION, {} INCONCLUSIVE, {} PASS of {} gated case(s); {} flagged. "
                    "Threshold {}%, {} rounds.\n\n",
                    j.regressions, j.inconclusive, j.passed, j.gated, j.cases.size() - j.gated,
                    r.settings.threshold_percent, r.rounds.size());
  md += "| case | measure | change | interval | noise | detectable | verdict |\n";
  md += "|---|---|---:|---|---:|---:|---|\n";
  for (std::size_t i = 0; i < j.cases.size(); ++i) {
    const auto& v = j.cases[i];
    std::string verdict = verdict_text(v);
    if (v.verdict == GateVerdict::regression) verdict = "**REGRESSION**";
    if (v.verdict == GateVerdict::inconclusive) verdict += ": " + resolve_advice(v);
    if (v.verdict == GateVerdict::flagged) verdict += ": " + v.flagged;
    md += fmt::format("| `{}` | {} | {} | {} | {:.1f}% | {:.1f}% | {} |\n", v.name,
                      to_string(r.series[i].measure), percent(v.ratio),
                      interval(v), v.noise_percent, v.detectable_percent, verdict);
  }
  md += fmt::format("\n<sub>ratio current/base per round of {}, {} paired rounds of fresh processes "
                    "({} repetitions each), paired t interval on log ratios trimmed {:.0f}% per "
                    "end, Holm over the gated cases at alpha {}; {}; {:.0f} s.</sub>\n",
                    measure_text(r), r.rounds.size(), r.repetitions, 100 * r.settings.trim,
                    r.settings.alpha, r.cpu_model, r.seconds);
  return md;
}

}  // namespace ropecheck
