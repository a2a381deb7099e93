// run_report(): `ropecheck report [--in DIR] [--baseline DIR] [--out DIR]` reads the results in
// DIR (verify.json, bench.json, accuracy.json: any of them), renders the plots with gnuplot into
// OUT/plots/ and writes OUT/report.md and a self-contained OUT/report.html.
//   ropecheck report --in reports/out/latest --baseline reports/baseline
#include <fmt/format.h>

#include <fstream>
#include <ostream>
#include <system_error>

#include "reports/report.h"
#include "core/exit_codes.h"
#include "core/result_files.h"
#include "core/logging.h"
#include "reports/content.h"
#include "reports/data.h"
#include "reports/gnuplot.h"
#include "reports/plots.h"
#include "reports/writer.h"
#include "core/errors.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream file(path);
  file << text;
  if (!file.flush()) throw InvalidInput(fmt::format("cannot write '{}'", path.string()));
}

}  // namespace

int run_report(const ReportOptions& options, std::ostream& out) {
  // Inputs first, gnuplot second: a malformed file is reported even where gnuplot is missing.
  ReportInputs inputs = read_report_inputs(options.in_dir, options.baseline_dir);
  inputs.history = options.history;
  const fs::path gnuplot = find_gnuplot();
  const fs::path out_dir = options.out_dir.empty() ? options.in_dir : options.out_dir;
  const fs::path plots_dir = out_dir / "plots";
  prepare_out_dir(plots_dir);

  const auto specs = plan_plots(inputs);
  progress_log().info("report: rendering {} plot(s) with {}", specs.size(), gnuplot.string());
  const auto figures = render_plots(specs, plots_dir, gnuplot);
  // A plot of an earlier report into the same directory (say, with --baseline) that this one
  // does not draw would sit in plots/ as if it were current: remove our own files of it, and
  // nothing else.
  for (const char* id : kAllPlots) {
    if (figures.contains(id)) continue;
    for (const char* ext : {".svg", ".dat", ".gp", ".gp.log"}) {
      std::error_code ignored;
      fs::remove(plots_dir / (std::string(id) + ext), ignored);
    }
  }
  const ReportDoc doc = build_report(inputs, figures);
  write_text(out_dir / "report.md", render_markdown(doc));
  write_text(out_dir / "report.html", render_html(doc));
  out << fmt::format("report.md:   {}\nreport.html: {}\nplots:       {} ({} SVG)\n",
                     (out_dir / "report.md").string(), (out_dir / "report.html").string(),
                     plots_dir.string(), figures.size());
  return kExitOk;
}

}  // namespace ropecheck
