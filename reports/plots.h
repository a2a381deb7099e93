// The report's plots: for each, a data file and a gnuplot script written into OUT/plots/ (kept, so
// that a person can edit and re-render: `cd OUT/plots && gnuplot NAME.gp`), rendered to NAME.svg.
// A plot whose data is absent (no bench.json, no accuracy.json, no --baseline) is left out.
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "reports/data.h"
#include "reports/doc.h"

namespace ropecheck {

// Plot ids (file names under plots/) the report places in its sections.
inline constexpr const char* kPlotThroughput = "rope_throughput_vs_tokens";
inline constexpr const char* kPlotLimitFraction = "rope_limit_fraction";
inline constexpr const char* kPlotAttention = "attention_gflops";
inline constexpr const char* kPlotErrorVsPosition = "error_vs_position";
inline constexpr const char* kPlotDecay = "long_range_decay";
inline constexpr const char* kPlotBaseline = "baseline_ratio";
inline constexpr const char* kAllPlots[] = {kPlotThroughput,      kPlotLimitFraction, kPlotAttention,
                                            kPlotErrorVsPosition, kPlotDecay,         kPlotBaseline};

// A plot before rendering: what gnuplot needs, and what the report says about it.
struct PlotSpec {
  std::string id, title, caption;
  int width = 900, height = 520;  // SVG size in pixels
  std::string data;    // NAME.dat: blocks separated by two blank lines (gnuplot's `index`)
  std::string script;  // the commands after the terminal and output lines
};

// The specs the inputs allow, by id.
std::map<std::string, PlotSpec> plan_plots(const ReportInputs& inputs);

// Writes NAME.dat and NAME.gp for each spec into `plots_dir`, runs gnuplot on each, and returns the
// figures (SVG text read back) by id; svg_path is "plots/NAME.svg".
std::map<std::string, Figure> render_plots(const std::map<std::string, PlotSpec>& specs,
                                           const std::filesystem::path& plots_dir,
                                           const std::filesystem::path& gnuplot);

}  // namespace ropecheck
