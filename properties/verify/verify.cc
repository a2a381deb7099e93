// run_verify(): `ropecheck verify` — plan, run, print the table (and kill matrix), write
// DIR/verify.json, return the verdict.
//   ropecheck verify --impl rotation_matrix/scalar --property oracle_agreement --cases 10
#include <fmt/format.h>

#include <ostream>

#include "properties/verify/verify.h"
#include "core/exit_codes.h"
#include "core/result_files.h"
#include "properties/verify/kill_matrix.h"
#include "core/logging.h"
#include "core/machine_info.h"
#include "properties/harness/model_shape_cases.h"
#include "properties/verify/repro.h"
#include "properties/verify/result_table.h"
#include "properties/verify/verify_json.h"
#include "properties/verify/verify_junit.h"
#include "properties/verify/verify_plan.h"
#include "properties/verify/verify_run.h"
#include "properties/verify/verify_summary.h"

namespace ropecheck {

int run_verify(const VerifyOptions& options, std::ostream& out) {
  keep_large_blocks_mapped();
  // Everything that can be bad input is checked before the first property runs.
  const VerifyPlan plan = plan_verify(options);
  prepare_out_dir(options.out_dir);

  const VerifyRun run = execute_plan(plan, options.jobs > 0 ? options.jobs : usable_cpus());
  const KillMatrix matrix = kill_matrix(run);
  const VerifySummary summary = summarize(run, matrix);

  print_results(plan, run, out);
  if (plan.mutants) print_kill_matrix(matrix, out);
  print_verdict(summary, plan.mutants, out);

  const auto json_path = options.out_dir / "verify.json";
  VerifyRecord record;
  record.command_line =
      options.command_line.empty() ? verify_command_line(options) : options.command_line;
  record.plan = &plan;
  record.run = &run;
  record.matrix = &matrix;
  record.summary = &summary;
  record.machine = this_machine();
  write_json_file(verify_json(record), json_path);
  if (!options.junit_out.empty()) write_text_file(verify_junit(run, matrix), options.junit_out);

  // Two lines, each within a terminal's 120 columns with spdlog's prefix; the verdict and exit
  // status are stdout's RESULT line (the main job's: its summary, which judges peers apart).
  progress_log().info("verify: {} passed, {} failed, {} skipped{} in {:.1f} s", summary.passed, summary.failed,
                      summary.skipped,
                      plan.mutants ? fmt::format("; mutants {} killed, {} survived", summary.mutants_killed,
                                                 summary.mutants_survived)
                                   : "",
                      run.seconds);
  progress_log().info("verify: wrote {}", json_path.string());
  return summary.exit_code;
}

}  // namespace ropecheck
