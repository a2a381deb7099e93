// A history read, arranged and judged: what `history report` draws and lists, and what the main
// job says about it. One StepFit per series (case x line), all tested together (steps.h: the
// Bonferroni count m is the page's number of commit boundaries).
#pragma once

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "history/series.h"
#include "history/steps.h"

namespace ropecheck::history {

struct SeriesFit {
  Series::Measure measure = Series::Measure::fraction;
  StepFit fit;
};

struct HistoryAnalysis {
  HistoryView view;
  std::vector<SeriesFit> fits;  // parallel to view.series
  std::size_t tests = 0;        // m: commit boundaries tested over the page
  StepSettings settings;
};

// Reads the history at `dir` (read_history), keeps the cases `filter` matches (empty: all),
// arranges them and fits every series. Throws InvalidInput for a bad or empty history, or a
// filter that keeps no case.
HistoryAnalysis analyse_history(const std::filesystem::path& dir, const std::string& filter,
                                const StepSettings& settings);

// The same on entries already read (the tests' synthetic histories).
HistoryAnalysis analyse_entries(std::vector<StoredEntry> entries, const StepSettings& settings);

// "fraction of the same-run probe", "GB/s", ...: what a measure is called on the page.
std::string measure_name(const Series& series, Series::Measure measure);

}  // namespace ropecheck::history
