// `ropecheck` with no arguments: the main job (verify, accuracy, a short bench, the report).
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "properties/property.h"
#include "reports/data.h"

namespace ropecheck {

struct MainJobOptions {
  int cases = 100;                        // RapidCheck cases per (subject, property) of its verify
  // The real model shapes its verify runs: the short calls, so that the job stays within two
  // minutes on 2 cores (all of them there: 250 CPU-seconds, docs/architecture.md "Tests").
  ModelShapeSet model_shapes = ModelShapeSet::short_calls;
  std::vector<std::string> command_line;  // recorded in the result files
  // Print every step's own output (verify's table, kill matrix and counterexamples, the benchmark
  // rows) before the summary, as the log holds it; without it stdout gets the summary alone.
  bool verbose = false;
};

// The main job's log in its output directory: every step's output and the summary, what
// --verbose prints.
inline constexpr const char* kMainJobLog = "main_job.log";

// `ropecheck` with no command: verify with mutants, accuracy, a short bench and the report into
// kDefaultOutDir (main_job.cc), then the verdict summary (reports/verdict_text.h) on `out`.
// Throws InvalidInput for bad options (cases <= 0).
int run_main_job(const MainJobOptions& options, std::ostream& out);

// With ROPECHECK_HISTORY=DIR, the main job's step after the bench: records the run in run_dir
// into the history DIR (under the commit checked out in `repo`: the main job's working
// directory), renders the history page into run_dir/history/, and returns the link the report
// shows. Throws InvalidInput as `ropecheck history add` and `history report` do (no checkout, a
// bad file in DIR).
ReportHistoryLink main_job_history(const std::filesystem::path& run_dir,
                                   const std::filesystem::path& history_dir,
                                   const std::filesystem::path& repo = ".");

}  // namespace ropecheck
