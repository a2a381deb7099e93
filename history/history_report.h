// `ropecheck history report --dir H --out OUT`: OUT/history.md and an offline OUT/history.html
// (every plot inlined as SVG, like report.html) with one plot per case against commit order and
// the steps found marked and listed; OUT/plots/history-*.{dat,gp,svg}. Reads the history only.
#pragma once

#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "history/steps.h"

namespace ropecheck::history {

inline constexpr const char* kDefaultHistoryOut = "reports/out/history";

struct ReportHistoryOptions {
  std::filesystem::path history_dir;                   // H
  std::filesystem::path out_dir = kDefaultHistoryOut;  // OUT
  std::string filter;                                  // a regex over case names; empty: all
  StepSettings settings;
};

// What the page shows, in a few words, for the command's output and the main job's report.
struct HistorySummary {
  std::filesystem::path markdown, html;
  std::size_t runs = 0, commits = 0, lines = 0, cases = 0, plots = 0;
  std::vector<std::string> steps;  // "<case> on <machine>: -9.8% [-12.0%, -7.5%] at <commit> (after <commit>)"
};

// Reads and judges the history, renders the plots with gnuplot and writes the page. Throws
// InvalidInput for a bad history (naming the file), bad options, gnuplot missing, or an
// unwritable OUT.
HistorySummary write_history_report(const ReportHistoryOptions& options);

// The command: write_history_report(), then where the files are and every step, on `out`.
// Returns kExitOk.
int run_history_report(const ReportHistoryOptions& options, std::ostream& out);

}  // namespace ropecheck::history
