// One plot per case for the history page: against commit order (oldest left), the case's rate
// (top) and its fraction of the same-run probe (bottom) on timed lines, and in a plot of its own
// (other units) its estimated cycles per call (top) and instructions per call (bottom) on counted
// lines; one colour per line (machine), each run
// a dot, a commit's median a line, the range of its runs a band, the fitted levels dashed, and
// every step a vertical line labelled with its size and commit (red slower, green faster).
// Rendered by the report's gnuplot machinery (reports/plots.h), so a person can edit and
// re-render one: `cd OUT/plots && gnuplot history-<case>.gp`.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "history/analysis.h"
#include "reports/plots.h"

namespace ropecheck::history {

inline constexpr const char* kHistoryPlotPrefix = "history-";

// One plot: a case on its timed lines, or on its counted lines.
struct PlotGroup {
  std::string case_name;
  bool counted = false;
  std::string id;                   // the file name under plots/, unique
  std::vector<std::size_t> series;  // indices into view.series
};

// Every plot of the page, by case in the view's order, the timed one before the counted one.
std::vector<PlotGroup> history_plot_groups(const HistoryView& view);

// The specs of every case, by id.
std::map<std::string, PlotSpec> plan_history_plots(const HistoryAnalysis& analysis);

// The colour of line `line` in every plot and table of the page.
const char* line_colour(std::size_t line);

}  // namespace ropecheck::history
