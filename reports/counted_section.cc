// counted_section() (counted_section.h).
#include "reports/counted_section.h"

#include <fmt/format.h>

#include <cmath>

namespace ropecheck {

std::string format_count(double per_call) {
  const double a = std::abs(per_call);
  if (a >= 1000) return fmt::format("{:.0f}", per_call);
  if (a >= 1 || a == 0) return fmt::format("{:.2f}", per_call);
  return fmt::format("{:.3g}", per_call);
}

void counted_section(ReportDoc& doc, const ReportInputs& in) {
  if (!in.counted) return;
  const CountedRun& run = *in.counted;
  const CountedRun* base = in.baseline_counted ? &*in.baseline_counted : nullptr;
  doc.blocks.emplace_back(Heading{2, "Counted (callgrind)"});
  doc.blocks.emplace_back(Paragraph{fmt::format(
      "Per call, from `{}`: callgrind's counts with a simulated cache, the same for one build in every "
      "process and on any x86 host (this one: {}). Counted at the {} kernel level{}; simulated caches: {}; "
      "{}. Estimated cycles = {}.",
      (in.in_dir / kCountedFileName).string(), run.cpu_model.empty() ? "-" : run.cpu_model, run.counted_isa,
      run.isa_note.empty() ? "" : " (" + run.isa_note + ")", run.simulated_caches, run.valgrind,
      run.model.formula())});
  Table t;
  t.header = {"case", "estimated cycles per call", "instructions per call", "L1 misses per call",
              "LL misses per call"};
  t.numeric = {false, true, true, true, true};
  if (base) {
    t.header.insert(t.header.end(), {"baseline estimated cycles per call", "change in estimated cycles"});
    t.numeric.insert(t.numeric.end(), {true, true});
  }
  for (const CountedCase& c : run.cases) {
    std::vector<TableCell> row = {{"`" + c.name + "`", ""},
                                  {format_count(c.estimated_cycles), ""},
                                  {format_count(c.instructions()), ""},
                                  {format_count(c.l1_misses()), ""},
                                  {format_count(c.ll_misses()), ""}};
    if (base) {
      const CountedCase* b = base->find(c.name);
      row.push_back({b ? format_count(b->estimated_cycles) : "-", ""});
      row.push_back({b ? fmt::format("{:+.2f}%", 100 * (c.estimated_cycles / b->estimated_cycles - 1))
                       : "(not in the baseline)",
                     ""});
    }
    t.rows.push_back(std::move(row));
  }
  doc.blocks.emplace_back(std::move(t));
  if (base && base->model.formula() != run.model.formula()) {
    doc.blocks.emplace_back(Paragraph{fmt::format(
        "The baseline's cycles are estimated otherwise ({}): their change is partly the model's.",
        base->model.formula())});
  }
}

}  // namespace ropecheck
