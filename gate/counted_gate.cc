// The counted half of a counted gate (counted_gate.h).
#include "gate/counted_gate.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "core/logging.h"
#include "gate/counted_suite.h"
#include "gate/cycle_model.h"
#include "gate/gated_cases.h"

namespace ropecheck {

std::vector<std::string> counted_gate_cases(const CountedGatePlan& plan, const std::vector<GateSide>& sides,
                                            const std::filesystem::path& out_dir,
                                            std::vector<std::string>& unpaired) {
  const auto listed = [&](const GateSide& side) {
    auto names = list_countable_cases(plan.valgrind, side.bench_command, plan.filter,
                                      out_dir / "counted" / "list" / side.label);
    std::erase_if(names, [](const std::string& name) { return !route_case(name).counted; });
    std::sort(names.begin(), names.end());
    return names;
  };
  const auto base = listed(sides[0]);
  const auto current = listed(sides[1]);
  std::vector<std::string> both;
  std::set_intersection(base.begin(), base.end(), current.begin(), current.end(), std::back_inserter(both));
  std::set_symmetric_difference(base.begin(), base.end(), current.begin(), current.end(),
                                std::back_inserter(unpaired));
  return both;
}

CountedGatePart run_counted_gate(const CountedGatePlan& plan, const std::vector<GateSide>& sides,
                                 const std::vector<std::string>& cases, const std::filesystem::path& out_dir) {
  const auto start = std::chrono::steady_clock::now();
  CountedGatePart part;
  part.ran = true;
  part.plan = plan;
  part.cases = cases;
  for (const auto& name : cases) part.why.push_back(route_case(name).why);
  CountedSuite suite;
  suite.valgrind = plan.valgrind;
  suite.cases = cases;
  suite.calls = plan.calls;
  suite.jobs = plan.jobs;
  suite.model = kCycleModel;
  suite.counted_isa = plan.counted_isa;
  suite.isa_note = plan.isa_note;
  std::vector<CountedSuite> suites;
  std::vector<std::filesystem::path> dirs;
  for (const GateSide& side : sides) {
    suite.bench_command = side.bench_command;
    suites.push_back(suite);
    dirs.push_back(out_dir / "counted" / side.label);
  }
  auto runs = count_suites(suites, dirs);
  part.base = std::move(runs[0]);
  part.current = std::move(runs[1]);
  progress_log().info("gate: counted {} case(s) on each side in {:.1f}s, {} process(es) at a time", cases.size(),
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), plan.jobs);
  part.judgement = judge_counted_runs(part.base, part.current, plan.threshold_percent);
  part.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return part;
}

}  // namespace ropecheck
