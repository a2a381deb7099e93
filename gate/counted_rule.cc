// judge_counted() and judge_counted_runs() (counted_rule.h).
#include "gate/counted_rule.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <tuple>

#include "core/errors.h"
#include "core/exit_codes.h"

namespace ropecheck {
namespace {

double ratio_of(double current, double base) {
  if (base > 0) return current / base;
  return current > 0 ? std::numeric_limits<double>::quiet_NaN() : 1;  // from none, or none either side
}

// Misses whose change differs from the instructions' by more than kMemoryNotePoints and moves
// the estimate by more than kMemoryNoteShare of the base's cycles: named, so that a change that
// moves memory traffic is not hidden behind one number (and a handful of misses is not news).
constexpr double kMemoryNotePoints = 0.01;
constexpr double kMemoryNoteShare = 0.001;

std::string memory_note(const CountedVerdict& v, const CountedCase& base, const CountedCase& current,
                        const CycleModel& model) {
  std::string note;
  const double l1_cycles = std::abs(current.l1_misses() - base.l1_misses()) * model.l1_miss_cycles;
  const double ll_cycles = std::abs(current.ll_misses() - base.ll_misses()) * model.ll_miss_cycles;
  for (const auto& [what, ratio, cycles] : {std::tuple{"L1 misses", v.l1_misses_ratio, l1_cycles},
                                            std::tuple{"LL misses", v.ll_misses_ratio, ll_cycles}}) {
    const bool apart = std::isnan(ratio) || std::abs(ratio - v.instructions_ratio) > kMemoryNotePoints;
    if (apart && cycles > kMemoryNoteShare * base.estimated_cycles) {
      note += fmt::format("{}{} {}", note.empty() ? "" : ", ", what, counted_change_text(ratio));
    }
  }
  if (note.empty()) return "";
  return fmt::format("memory traffic moved: {} (instructions {})", note, counted_change_text(v.instructions_ratio));
}

}  // namespace

std::string counted_change_text(double ratio) {
  return std::isnan(ratio) ? "from none" : fmt::format("{:+.2f}%", 100 * (ratio - 1));
}

CountedVerdict judge_counted(const CountedCase& base, const CountedCase& current, double threshold_percent,
                             const CycleModel& model) {
  if (!(threshold_percent > 0 && threshold_percent < 100)) {
    throw InvalidInput(fmt::format("--threshold must be in (0, 100) per cent, got {}", threshold_percent));
  }
  if (base.calls < 1 || current.calls < 1 || !(base.estimated_cycles > 0) || !(current.estimated_cycles > 0)) {
    throw InvalidInput(fmt::format("{}: a side counted nothing", base.name));
  }
  CountedVerdict v;
  v.name = base.name;
  v.base_cycles = base.estimated_cycles;
  v.current_cycles = current.estimated_cycles;
  v.cycles_ratio = current.estimated_cycles / base.estimated_cycles;
  v.instructions_ratio = ratio_of(current.instructions(), base.instructions());
  v.l1_misses_ratio = ratio_of(current.l1_misses(), base.l1_misses());
  v.ll_misses_ratio = ratio_of(current.ll_misses(), base.ll_misses());
  const double change = 100 * (v.cycles_ratio - 1);
  v.verdict = change > threshold_percent + kCountedSpreadPercent   ? GateVerdict::regression
              : change < threshold_percent - kCountedSpreadPercent ? GateVerdict::pass
                                                                   : GateVerdict::inconclusive;
  v.memory_note = memory_note(v, base, current, model);
  return v;
}

CountedJudgement judge_counted_runs(const CountedRun& base, const CountedRun& current, double threshold_percent) {
  CountedJudgement j;
  for (const auto& b : base.cases) {
    const CountedCase* c = current.find(b.name);
    if (c == nullptr) {
      j.unpaired.push_back(b.name);
      continue;
    }
    j.cases.push_back(judge_counted(b, *c, threshold_percent, base.model));
    const GateVerdict verdict = j.cases.back().verdict;
    j.regressions += verdict == GateVerdict::regression;
    j.inconclusive += verdict == GateVerdict::inconclusive;
    j.passed += verdict == GateVerdict::pass;
  }
  for (const auto& c : current.cases) {
    if (base.find(c.name) == nullptr) j.unpaired.push_back(c.name);
  }
  j.exit_code = j.regressions > 0 ? kExitFailed : j.inconclusive > 0 ? kExitInconclusive : kExitOk;
  return j;
}

}  // namespace ropecheck
