// Text rendering of verify results: TextTable rows plus note lines under failures.
//   ropecheck verify --impl mutant/sin_sign_flipped --cases 20   (shows FAILED rows)
#include "properties/verify/result_table.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <ostream>
#include <sstream>

#include "properties/verify/repro.h"
#include "core/text_table.h"

namespace ropecheck {
namespace {

// Counterexamples can print whole tensors; the table keeps each line readable and verify.json
// keeps the full text.
constexpr std::size_t kMaxNoteLineChars = 300;

std::string number(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return fmt::format("{:.3g}", x);
}

std::string ratio_cell(const PropertyResult& r) {
  if (r.status == Status::skipped || (r.bound == 0.0 && r.worst_ratio == 0.0 && r.units.empty())) {
    return "-";
  }
  return number(r.worst_ratio);
}

std::string error_cell(const PropertyResult& r) {
  if (r.status == Status::skipped || (r.bound == 0.0 && r.worst_error == 0.0 && r.units.empty())) {
    return "-";
  }
  return fmt::format("{} / {} {}", number(r.worst_error), number(r.bound), r.units);
}

std::string clipped(const std::string& line) {
  if (line.size() <= kMaxNoteLineChars) return line;
  return fmt::format("{}... ({} more chars in verify.json)", line.substr(0, kMaxNoteLineChars),
                     line.size() - kMaxNoteLineChars);
}

// `whole_until`: the lines before the first that starts with it print whole (a counterexample's
// calls: a porter replays them, a spec's LongRoPE factors included); the rest clipped.
void add_indented(TextTable& table, std::string_view indent, const std::string& text,
                  std::string_view whole_until = {}) {
  std::istringstream lines(text);
  bool whole = !whole_until.empty();
  for (std::string line; std::getline(lines, line);) {
    if (whole && line.starts_with(whole_until)) whole = false;
    table.add_note(fmt::format("{}{}", indent, whole ? line : clipped(line)));
  }
}

void add_failure_notes(TextTable& table, const PropertyResult& r, const RunConfig& config) {
  if (!r.message.empty()) {
    table.add_note("    message:");
    add_indented(table, "      ", r.message);
  }
  if (!r.counterexample.empty()) {
    table.add_note("    counterexample:");
    add_indented(table, "      ", r.counterexample, "values the case drew:");
  }
  table.add_note(fmt::format("    __REPRO: {}", repro_command(r, config)));
}

void print_section(const char* title, const VerifyPlan& plan, const VerifyRun& run,
                   bool mutants, std::ostream& out) {
  using Align = TextTable::Align;
  TextTable table({"STATUS", "SUBJECT", "PROPERTY", "CASES", "WORST/BOUND", "WORST ERROR / BOUND",
                   "TIME"},
                  {Align::left, Align::left, Align::left, Align::right, Align::right, Align::left,
                   Align::right});
  int rows = 0;
  for (const auto& subject : run.subjects) {
    if (subject.judged_as_mutant != mutants) continue;
    for (const auto& r : subject.results) {
      table.add_row({std::string(to_string(r.status)), r.subject, r.property,
                     std::to_string(r.cases), ratio_cell(r), error_cell(r),
                     fmt::format("{:.3f}s", r.seconds)});
      ++rows;
      if (failing(r.status)) add_failure_notes(table, r, plan.config);
      if (r.status == Status::skipped || r.status == Status::mistrusted) {
        table.add_note(fmt::format("    reason: {}", r.message));
      }
    }
  }
  if (rows == 0) return;
  out << '\n' << title << '\n';
  table.print(out);
}

}  // namespace

void print_results(const VerifyPlan& plan, const VerifyRun& run, std::ostream& out) {
  std::size_t pairs = 0;
  for (const auto& job : plan.jobs) pairs += job.properties.size();
  out << fmt::format("ropecheck verify: {} subject{}, {} (subject, property) pair{}, seed {}, "
                     "{} cases each{}\n",
                     plan.jobs.size(), plan.jobs.size() == 1 ? "" : "s", pairs,
                     pairs == 1 ? "" : "s", plan.config.seed, plan.config.cases,
                     plan.config.reproduce.empty() ? "" : ", replaying a reproduce string");
  print_section("Subjects under test (each must pass):", plan, run, false, out);
  print_section("Mutants (each must FAIL at least one property):", plan, run, true, out);
}

void print_kill_matrix(const KillMatrix& matrix, std::ostream& out) {
  if (matrix.mutants.empty()) return;
  out << "\nKill matrix (X caught: the property FAILED on the mutant; . passed; - skipped; "
         "blank: not applicable):\n";
  std::vector<std::string> header = {"MUTANT"};
  std::vector<TextTable::Align> align = {TextTable::Align::left};
  for (std::size_t c = 0; c < matrix.properties.size(); ++c) {
    header.push_back(std::to_string(c + 1));
    align.push_back(TextTable::Align::right);
  }
  TextTable table(header, align);
  for (const auto& row : matrix.mutants) {
    std::vector<std::string> cells = {row.mutant};
    for (const auto& cell : row.cells) {
      cells.emplace_back(!cell                      ? ""
                         : failing(*cell)          ? "X"
                         : *cell == Status::passed ? "."
                                                   : "-");
    }
    table.add_row(std::move(cells));
  }
  table.print(out);
  for (std::size_t c = 0; c < matrix.properties.size(); ++c) {
    out << fmt::format("  {:>2} = {}\n", c + 1, matrix.properties[c]);
  }
  out << '\n';
  TextTable verdicts({"MUTANT", "VERDICT"});
  for (const auto& row : matrix.mutants) {
    verdicts.add_row(
        {row.mutant, row.killed() ? fmt::format("KILLED (by {})", fmt::join(row.killed_by, ", "))
                     : row.planned == 0
                         ? std::string("SURVIVED (no selected property applies to it)")
                     : row.ran == 0
                         ? std::string("SURVIVED (every property was skipped on it)")
                         : fmt::format("SURVIVED (passed all {} properties it ran)", row.ran)});
  }
  verdicts.print(out);
}

void print_verdict(const VerifySummary& s, bool mutants, std::ostream& out) {
  std::string counts = fmt::format("{} PASSED, {} FAILED, {} SKIPPED", s.passed, s.failed,
                                   s.skipped);
  if (s.mistrusted > 0) counts += fmt::format(", {} MISTRUSTED", s.mistrusted);
  if (mutants) {
    counts += fmt::format("; mutants: {} KILLED, {} SURVIVED", s.mutants_killed,
                          s.mutants_survived);
  }
  std::vector<std::string> why;
  if (s.unexpected_failures > 0) {
    why.push_back(fmt::format("{} failure{} on subjects that must pass", s.unexpected_failures,
                              s.unexpected_failures == 1 ? "" : "s"));
  }
  if (s.mutants_survived > 0) {
    why.push_back(fmt::format("{} mutant{} survived", s.mutants_survived,
                              s.mutants_survived == 1 ? "" : "s"));
  }
  out << fmt::format("\n{}\nRESULT: {}\n", counts,
                     why.empty() ? std::string("PASSED")
                                 : fmt::format("FAILED ({})", fmt::join(why, "; ")));
}

}  // namespace ropecheck
