// run_count() (count_command.h).
#include "gate/count_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>

#include "core/errors.h"
#include "core/logging.h"
#include "core/machine_info.h"
#include "core/result_files.h"
#include "core/text_table.h"
#include "gate/child_process.h"
#include "gate/counted_runner.h"
#include "gate/counted_suite.h"
#include "gate/cycle_model.h"
#include "gate/gate_rounds.h"
#include "gate/gated_cases.h"

namespace ropecheck {

int run_count(const CountOptions& options, std::ostream& out) {
  if (options.calls < 1 || options.calls > 100000) {
    throw InvalidInput(fmt::format("--calls must be in [1, 100000], got {}", options.calls));
  }
  const auto valgrind = require_valgrind("count");
  prepare_out_dir(options.out_dir);
  const auto dir = std::filesystem::absolute(options.out_dir);
  const GateSide self{"count", {this_executable().string(), "bench"}};
  const auto kernels = fastest_counted_kernels(available_implementations(self, dir));
  const std::string filter = options.filter.empty() ? default_gate_filter(kernels) : options.filter;
  auto cases = list_countable_cases(valgrind, self.bench_command, filter, dir / "list");
  if (options.filter.empty()) {  // the default: what a counted gate counts, not what it times
    std::erase_if(cases, [](const std::string& name) { return !route_case(name).counted; });
  }
  if (cases.empty()) throw InvalidInput(fmt::format("count: no case to count matches --filter '{}'", filter));

  CountedSuite suite;
  suite.valgrind = valgrind;
  suite.bench_command = self.bench_command;
  suite.cases = cases;
  suite.calls = options.calls;
  suite.jobs = options.jobs > 0 ? options.jobs : std::max(1, usable_cpus());
  suite.model = kCycleModel;
  suite.counted_isa = counted_level(kernels);
  suite.isa_note = counted_level_note(suite.counted_isa);
  progress_log().info("count: {} case(s) under callgrind, {} at a time", cases.size(), suite.jobs);
  const CountedRun run = count_suite(suite, dir);

  using A = TextTable::Align;
  TextTable table({"CASE", "EST. CYCLES/CALL", "INSTRUCTIONS/CALL", "L1 MISSES/CALL", "LL MISSES/CALL"},
                  {A::left, A::right, A::right, A::right, A::right});
  for (const auto& c : run.cases) {
    table.add_row({c.name, fmt::format("{:.0f}", c.estimated_cycles), fmt::format("{:.0f}", c.instructions()),
                   fmt::format("{:.0f}", c.l1_misses()), fmt::format("{:.0f}", c.ll_misses())});
  }
  table.print(out);
  out << fmt::format("cycles estimated as {}; {} calls a case after one that warms the caches; simulated "
                     "caches: {}; {}.\n", run.model.formula(), options.calls, run.simulated_caches, run.valgrind);
  if (!run.isa_note.empty()) out << "note: " << run.isa_note << "\n";
  out << fmt::format("counted.json: {}\n", (dir / kCountedFileName).string());
  return 0;
}

}  // namespace ropecheck
