// write_history_report() and run_history_report() (history_report.h).
#include "history/history_report.h"

#include <fmt/format.h>

#include <ostream>
#include <system_error>

#include "core/exit_codes.h"
#include "core/logging.h"
#include "core/result_files.h"
#include "history/analysis.h"
#include "history/history_page.h"
#include "history/history_plots.h"
#include "reports/gnuplot.h"
#include "reports/plots.h"
#include "reports/writer.h"

namespace ropecheck::history {
namespace {

namespace fs = std::filesystem;

// Our plot files from an earlier page that this one does not draw (a case since filtered out)
// would sit in plots/ as if current: removed, and nothing else.
void remove_stale_plots(const fs::path& plots_dir, const std::map<std::string, Figure>& figures) {
  std::error_code error;
  std::vector<fs::path> stale;
  for (fs::directory_iterator it(plots_dir, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(kHistoryPlotPrefix, 0) != 0) continue;
    const std::string id = name.substr(0, name.find('.'));
    if (!figures.contains(id)) stale.push_back(it->path());
  }
  for (const auto& path : stale) fs::remove(path, error);
}

}  // namespace

HistorySummary write_history_report(const ReportHistoryOptions& options) {
  // The history first, gnuplot second: a bad file is named even where gnuplot is missing.
  const HistoryAnalysis analysis = analyse_history(options.history_dir, options.filter, options.settings);
  const fs::path gnuplot = find_gnuplot();
  const fs::path plots_dir = options.out_dir / "plots";
  prepare_out_dir(plots_dir);
  const auto specs = plan_history_plots(analysis);
  progress_log().info("history report: rendering {} plot(s) with {}", specs.size(), gnuplot.string());
  const auto figures = render_plots(specs, plots_dir, gnuplot);
  remove_stale_plots(plots_dir, figures);
  const ReportDoc doc = build_history_page(analysis, figures, options.history_dir.string());
  HistorySummary summary;
  summary.markdown = options.out_dir / "history.md";
  summary.html = options.out_dir / "history.html";
  write_text_file(render_markdown(doc), summary.markdown);
  write_text_file(render_html(doc), summary.html);
  summary.runs = analysis.view.entries.size();
  summary.commits = analysis.view.commits.size();
  summary.lines = analysis.view.lines.size();
  summary.cases = analysis.view.cases.size();
  summary.plots = figures.size();
  for (const auto& row : step_rows(analysis)) {
    summary.steps.push_back(fmt::format("{} on {}: {} {} at {} (after {})", row.case_name, row.line, row.change,
                                        row.interval, row.commit, row.after));
  }
  return summary;
}

int run_history_report(const ReportHistoryOptions& options, std::ostream& out) {
  const HistorySummary s = write_history_report(options);
  out << fmt::format("history.md:   {}\nhistory.html: {}\nplots:        {} ({} SVG)\n", s.markdown.string(),
                     s.html.string(), (options.out_dir / "plots").string(), s.plots);
  out << fmt::format("{} run(s) of {} commit(s) on {} machine line(s), {} case(s); {} step(s)\n", s.runs,
                     s.commits, s.lines, s.cases, s.steps.size());
  for (const auto& step : s.steps) out << "STEP  " << step << '\n';
  return kExitOk;
}

}  // namespace ropecheck::history
