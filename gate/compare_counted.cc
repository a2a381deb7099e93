// run_compare_counted(): `ropecheck compare` of two counted runs (compare.h).
//   ropecheck compare reports/out/count-main reports/out/count --threshold 1
#include <fmt/format.h>

#include <ostream>

#include "bench/format/counted_json.h"
#include "core/build_info.h"
#include "core/logging.h"
#include "core/result_files.h"
#include "gate/compare.h"
#include "gate/counted_report.h"
#include "gate/counted_rule.h"

namespace ropecheck {

int run_compare_counted(const CompareOptions& options, std::ostream& out) {
  const CountedRun base = read_counted_run(options.base);
  const CountedRun current = read_counted_run(options.current);
  const double threshold = options.counted_threshold_percent;
  const CountedJudgement j = judge_counted_runs(base, current, threshold);
  print_counted_table(j, {}, out);
  out << counted_legend(base, threshold, base.cases.empty() ? 0 : base.cases.front().calls);
  if (base.simulated_caches != current.simulated_caches || base.valgrind != current.valgrind ||
      base.model.formula() != current.model.formula()) {
    out << fmt::format("warning: the two runs were counted differently ({}, {}, {} against {}, {}, {}): "
                       "their counts are not comparable as they stand\n", base.simulated_caches, base.valgrind,
                       base.model.formula(), current.simulated_caches, current.valgrind, current.model.formula());
  }
  const char* verdict = j.exit_code == 1 ? "REGRESSION" : j.exit_code == 3 ? "INCONCLUSIVE" : "PASS";
  out << fmt::format("compare (counted): {} REGRESSION, {} INCONCLUSIVE, {} PASS of {} case(s) on estimated "
                     "cycles, threshold {}% -> {} (exit {})\n", j.regressions, j.inconclusive, j.passed,
                     j.cases.size(), threshold, verdict, j.exit_code);
  std::filesystem::path json_out = options.json_out;
  std::error_code error;
  if (json_out.empty() && std::filesystem::is_directory(options.current, error)) json_out = options.current / "compare.json";
  if (!json_out.empty()) {
    CountedGatePart part;
    part.ran = true;
    part.plan.threshold_percent = threshold;
    part.base = base;
    part.current = current;
    part.judgement = j;
    auto json = counted_gate_json(part);
    json.erase("filter");
    json.erase("seconds");
    nlohmann::ordered_json doc = {{"schema", "ropecheck.compare_counted/1"},
                                  {"tool", {{"name", "ropecheck"}, {"version", build_info::kVersion}}},
                                  {"base", options.base.string()},
                                  {"current", options.current.string()},
                                  {"counted", json}};
    write_json_file(doc, json_out);
    progress_log().info("compare: wrote {}", json_out.string());
  }
  return j.exit_code;
}

}  // namespace ropecheck
