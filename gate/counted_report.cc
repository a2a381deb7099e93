// The counted verdicts' table, markdown, JSON and JUnit (counted_report.h).
#include "gate/counted_report.h"

#include <fmt/format.h>

#include <ostream>

#include "core/result_files.h"
#include "core/text_table.h"

namespace ropecheck {

void print_counted_table(const CountedJudgement& judgement, const std::vector<std::string>& why, std::ostream& out) {
  using A = TextTable::Align;
  TextTable table({"CASE", "MEASURE", "CYCLES/CALL BASE", "CURRENT", "CHANGE", "INSTR", "L1 MISS", "LL MISS", "VERDICT"},
                  {A::left, A::left, A::right, A::right, A::right, A::right, A::right, A::right, A::left});
  for (std::size_t i = 0; i < judgement.cases.size(); ++i) {
    const auto& v = judgement.cases[i];
    table.add_row({v.name, "counted", fmt::format("{:.0f}", v.base_cycles), fmt::format("{:.0f}", v.current_cycles),
                   counted_change_text(v.cycles_ratio), counted_change_text(v.instructions_ratio),
                   counted_change_text(v.l1_misses_ratio), counted_change_text(v.ll_misses_ratio),
                   std::string(to_string(v.verdict))});
    if (!v.memory_note.empty()) table.add_note("    " + v.memory_note);
    if (i < why.size() && !why[i].empty()) table.add_note("    " + why[i]);
  }
  table.print(out);
  for (const auto& name : judgement.unpaired) out << "note: " << name << ": counted on one side only; not judged\n";
}

std::string counted_legend(const CountedRun& run, double threshold_percent, int calls) {
  std::string legend = fmt::format(
      "COUNTED: estimated cycles per call = {}, over {} calls per side after two that warm the simulated "
      "caches ({}; {}); CHANGE is current/base - 1: REGRESSION above +{}% by more than the counts' spread "
      "of {}%, PASS below it by as much, INCONCLUSIVE between.",
      run.model.formula(), calls, run.simulated_caches, run.valgrind, threshold_percent, kCountedSpreadPercent);
  if (!run.isa_note.empty()) legend += "\nnote: " + run.isa_note;
  return legend + "\n";
}

std::string counted_markdown_rows(const CountedJudgement& judgement) {
  std::string md;
  for (const auto& v : judgement.cases) {
    std::string verdict(to_string(v.verdict));
    if (v.verdict == GateVerdict::regression) verdict = "**REGRESSION**";
    if (!v.memory_note.empty()) verdict += ": " + v.memory_note;
    md += fmt::format("| `{}` | counted | {} | instructions {}, L1 misses {}, LL misses {} | {} |\n", v.name,
                      counted_change_text(v.cycles_ratio), counted_change_text(v.instructions_ratio),
                      counted_change_text(v.l1_misses_ratio), counted_change_text(v.ll_misses_ratio), verdict);
  }
  return md;
}

nlohmann::ordered_json counted_gate_json(const CountedGatePart& part) {
  using Json = nlohmann::ordered_json;
  if (!part.ran) return nullptr;
  const auto per_call = [](const CountedCase* c) -> Json {
    if (c == nullptr) return nullptr;
    return {{"estimated_cycles", c->estimated_cycles}, {"instructions", c->instructions()},
            {"l1_misses", c->l1_misses()}, {"ll_misses", c->ll_misses()}};
  };
  Json cases = Json::array();
  for (std::size_t i = 0; i < part.judgement.cases.size(); ++i) {
    const auto& v = part.judgement.cases[i];
    cases.push_back({{"name", v.name},
                     {"verdict", std::string(to_string(v.verdict))},
                     {"why", i < part.why.size() ? part.why[i] : ""},
                     {"change_percent", 100 * (v.cycles_ratio - 1)},
                     {"instructions_change_percent", number_or_null(100 * (v.instructions_ratio - 1))},
                     {"l1_misses_change_percent", number_or_null(100 * (v.l1_misses_ratio - 1))},
                     {"ll_misses_change_percent", number_or_null(100 * (v.ll_misses_ratio - 1))},
                     {"memory_note", v.memory_note},
                     {"base", per_call(part.base.find(v.name))},
                     {"current", per_call(part.current.find(v.name))}});
  }
  const auto& j = part.judgement;
  return {{"filter", part.plan.filter},
          {"threshold_percent", part.plan.threshold_percent},
          {"spread_percent", kCountedSpreadPercent},
          {"calls", part.plan.calls},
          {"counted_isa", part.plan.counted_isa},
          {"isa_note", part.plan.isa_note},
          {"simulated_caches", part.base.simulated_caches},
          {"valgrind", part.base.valgrind},
          {"cycle_formula", part.base.model.formula()},
          {"seconds", part.seconds},
          {"cases", cases},
          {"unpaired", j.unpaired},
          {"summary", {{"regression", j.regressions}, {"inconclusive", j.inconclusive}, {"pass", j.passed},
                       {"exit_code", j.exit_code}}}};
}

std::vector<JUnitTestCase> counted_junit_cases(const CountedGatePart& part) {
  std::vector<JUnitTestCase> cases;
  for (const auto& v : part.judgement.cases) {
    JUnitTestCase t;
    t.classname = "ropecheck.gate.counted";
    t.name = v.name;
    t.seconds = part.judgement.cases.empty() ? 0 : part.seconds / static_cast<double>(part.judgement.cases.size());
    const std::string measured = fmt::format(
        "estimated cycles per call {:.0f} -> {:.0f} ({}), instructions {}, L1 misses {}, LL misses {}, threshold {}%",
        v.base_cycles, v.current_cycles, counted_change_text(v.cycles_ratio), counted_change_text(v.instructions_ratio),
        counted_change_text(v.l1_misses_ratio), counted_change_text(v.ll_misses_ratio), part.plan.threshold_percent);
    if (v.verdict == GateVerdict::regression) {
      t.outcome = JUnitTestCase::Outcome::failure;
      t.message = "REGRESSION (counted): " + measured;
      t.details = t.message + "\n";
    } else if (v.verdict == GateVerdict::inconclusive) {
      t.outcome = JUnitTestCase::Outcome::skipped;
      t.message = fmt::format("INCONCLUSIVE (counted): {}; within the counts' spread of {}% of the threshold",
                              measured, kCountedSpreadPercent);
    }
    cases.push_back(std::move(t));
  }
  return cases;
}

}  // namespace ropecheck
