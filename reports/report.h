// `ropecheck report`: reads result files (verify.json, bench.json, accuracy.json, counted.json) and
// writes report.md, report.html and plots/. Never runs an implementation.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "core/result_files.h"
#include "reports/data.h"

namespace ropecheck {

// `ropecheck report [--in DIR] [--baseline DIR] [--out DIR]`: report.md, report.html, plots/.
struct ReportOptions {
  std::filesystem::path in_dir = kDefaultOutDir;  // verify.json, bench.json, accuracy.json, counted.json (any)
  // Empty: none; else a bench.json, a counted.json, or a directory holding either or both.
  std::filesystem::path baseline_dir;
  std::filesystem::path out_dir;       // empty: in_dir
  // The history page to link (the main job with ROPECHECK_HISTORY): its path relative to
  // out_dir, and what it shows; empty page: no link.
  ReportHistoryLink history;
};

// Renders the plots with gnuplot (out_dir/plots/: .dat, .gp, .svg) and writes out_dir/report.md
// and a self-contained out_dir/report.html; prints where to `out`. Returns kExitOk; throws
// InvalidInput when in_dir holds none of the inputs, an input is malformed (naming it), the
// baseline has neither bench.json nor counted.json, gnuplot is not on PATH, or out_dir cannot be written.
int run_report(const ReportOptions& options, std::ostream& out);

}  // namespace ropecheck
