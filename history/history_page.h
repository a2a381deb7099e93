// What history.md and history.html say, as a ReportDoc (reports/doc.h) that the report's writers
// render. It opens with the steps found (the commit that introduced each, the case, its size and
// interval, where the line is now, the machine, what else changed there), then how they were
// found, the machines, the commits, and one plot per case, the cases with steps first.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "history/analysis.h"
#include "reports/doc.h"

namespace ropecheck::history {

// One step as the page lists it.
struct StepRow {
  std::size_t series = 0, step = 0;  // indices into analysis.view.series and its fit's steps
  std::string case_name, line, commit, after, change, interval, rate_change, now, environment;
};

// Every step of the analysis, oldest commit first.
std::vector<StepRow> step_rows(const HistoryAnalysis& analysis);

// `figures` by plot id (history_plots.h).
ReportDoc build_history_page(const HistoryAnalysis& analysis, const std::map<std::string, Figure>& figures,
                             const std::string& history_dir);

// "+9.8%" (one decimal, a sign always).
std::string signed_percent(double change);

}  // namespace ropecheck::history
