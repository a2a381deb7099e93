// plan_history_plots() (history_plots.h): per case a data file of gnuplot blocks (per line: the
// commits' medians and ranges, the runs, the fitted levels; per panel) and a two-panel script.
#include "history/history_plots.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <sstream>

#include "reports/gnuplot.h"

namespace ropecheck::history {
namespace {

// The report's palette (reports/plots.cc): distinguishable on white and for the common
// colour-vision deficiencies.
constexpr const char* kLineColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2",
                                        "#7f7f7f", "#b5b520", "#17becf", "#393b79", "#8c6d31"};
constexpr const char* kSlowerColour = "#d62728";
constexpr const char* kFasterColour = "#2ca02c";

std::string plot_number(double x) { return fmt::format("{:.6g}", x); }

std::string file_slug(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
    if (keep) {
      out += c;
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.substr(0, 120);
}

// The panels: on timed lines the rate (or calls per second) and the fraction of the probe; on
// counted lines the estimated cycles and the instructions, per call.
enum class Panel { rate, fraction, cycles, instructions };

double panel_value(const RunValue& r, Panel panel, bool use_calls) {
  switch (panel) {
    case Panel::rate: return use_calls ? r.calls_per_second : r.rate;
    case Panel::fraction: return r.fraction;
    case Panel::cycles: return r.estimated_cycles;
    case Panel::instructions: return r.instructions;
  }
  return 0;
}

// The measure a panel draws, for its fitted levels.
bool fitted_in(Panel panel, bool use_calls, Series::Measure measure) {
  switch (panel) {
    case Panel::rate: return measure == (use_calls ? Series::Measure::calls : Series::Measure::rate);
    case Panel::fraction: return measure == Series::Measure::fraction;
    case Panel::cycles: return measure == Series::Measure::cycles;
    case Panel::instructions: return false;
  }
  return false;
}

// The data blocks of one panel of one series, appended to `data`; returns the plot clauses.
std::string panel_blocks(const HistoryAnalysis& a, std::size_t series_index, Panel panel, bool use_calls,
                         int& index, std::ostringstream& data, const std::string& id) {
  const Series& s = a.view.series[series_index];
  const SeriesFit& f = a.fits[series_index];
  const std::string colour = line_colour(s.line);
  const auto value = [&](const RunValue& r) { return panel_value(r, panel, use_calls); };
  std::ostringstream commits, runs;
  for (const auto& c : s.commits) {
    std::vector<double> values;
    for (const auto& r : c.runs) {
      if (value(r) > 0) values.push_back(value(r));
    }
    if (values.empty()) continue;
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    const double median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    commits << c.commit << ' ' << plot_number(median) << ' ' << plot_number(values.front()) << ' '
            << plot_number(values.back()) << '\n';
    // Several runs of a commit side by side, a little apart, so each dot shows.
    for (std::size_t k = 0; k < c.runs.size(); ++k) {
      if (!(value(c.runs[k]) > 0)) continue;
      const double jitter = c.runs.size() > 1 ? 0.18 * (static_cast<double>(k) / static_cast<double>(c.runs.size() - 1) - 0.5) : 0;
      runs << plot_number(static_cast<double>(c.commit) + jitter) << ' ' << plot_number(value(c.runs[k])) << '\n';
    }
  }
  if (commits.str().empty()) return "";
  std::string clauses;
  const auto& line = a.view.lines[s.line];
  data << "# [" << index << "] " << line.label << ": commit, median, lowest run, highest run\n"
       << commits.str() << "\n\n";
  clauses += fmt::format("'{0}.dat' index {1} using 1:3:4 with filledcurves fs transparent solid 0.18 "
                         "noborder lc rgb '{2}' notitle, \\\n     '{0}.dat' index {1} using 1:2 with "
                         "linespoints lw 2 pt 7 ps 0.55 lc rgb '{2}' title {3}",
                         id, index, colour,
                         panel == Panel::rate || panel == Panel::cycles ? gp_label(line.label) : "''");
  ++index;
  data << "# [" << index << "] " << line.label << ": each run\n" << runs.str() << "\n\n";
  clauses += fmt::format(", \\\n     '{}.dat' index {} using 1:2 with points pt 6 ps 0.45 lc rgb '{}' notitle",
                         id, index, colour);
  ++index;
  // The fitted levels on the panel, and in the units, of the measure the steps were found in.
  if (fitted_in(panel, use_calls, f.measure) && s.commits.size() > 1) {
    data << "# [" << index << "] " << line.label << ": fitted levels (x from, x to, level)\n";
    for (const auto& seg : f.fit.segments) {
      const double x0 = static_cast<double>(s.commits[seg.first].commit) - 0.3;
      const double x1 = static_cast<double>(s.commits[seg.last].commit) + 0.3;
      data << plot_number(x0) << ' ' << plot_number(std::exp(seg.level)) << '\n'
           << plot_number(x1) << ' ' << plot_number(std::exp(seg.level)) << "\n\n";
    }
    data << '\n';
    clauses += fmt::format(", \\\n     '{}.dat' index {} using 1:2 with lines dt 2 lw 1.5 lc rgb '{}' notitle",
                           id, index, colour);
    ++index;
  }
  return clauses;
}

}  // namespace

const char* line_colour(std::size_t line) { return kLineColours[line % std::size(kLineColours)]; }

std::vector<PlotGroup> history_plot_groups(const HistoryView& view) {
  std::vector<PlotGroup> groups;
  std::set<std::string> taken;
  for (const auto& name : view.cases) {
    for (const bool counted : {false, true}) {
      PlotGroup g{name, counted, "", {}};
      for (std::size_t i = 0; i < view.series.size(); ++i) {
        const Series& s = view.series[i];
        if (s.case_name == name && view.lines[s.line].counted == counted) g.series.push_back(i);
      }
      if (g.series.empty()) continue;
      const std::string base = kHistoryPlotPrefix + std::string(counted ? "counted-" : "") + file_slug(name);
      g.id = base;
      for (int k = 2; taken.contains(g.id); ++k) g.id = fmt::format("{}-{}", base, k);
      taken.insert(g.id);
      groups.push_back(std::move(g));
    }
  }
  return groups;
}

std::map<std::string, PlotSpec> plan_history_plots(const HistoryAnalysis& a) {
  std::map<std::string, PlotSpec> specs;
  for (const PlotGroup& group : history_plot_groups(a.view)) {
    const std::vector<std::size_t>& members = group.series;
    PlotSpec p;
    p.id = group.id;
    p.title = group.counted ? group.case_name + " (counted)" : group.case_name;
    p.width = 1000;
    p.height = 640;
    // The commits this case has runs at, on any line: the x range and its tics.
    std::set<std::size_t> xs, marked;
    bool any_fraction = false, any_rate = false;
    std::string unit;
    for (const std::size_t i : members) {
      const Series& s = a.view.series[i];
      for (const auto& c : s.commits) {
        xs.insert(c.commit);
        for (const auto& r : c.runs) {
          any_fraction = any_fraction || r.fraction > 0;
          any_rate = any_rate || r.rate > 0;
        }
      }
      if (unit.empty()) unit = s.rate_unit;
      for (const auto& step : a.fits[i].fit.steps) marked.insert(s.commits[step.at].commit);
    }
    const bool use_calls = !any_rate;
    const Panel top = group.counted ? Panel::cycles : Panel::rate;
    const Panel bottom = group.counted ? Panel::instructions : Panel::fraction;
    const bool two_panels = group.counted || any_fraction;
    std::ostringstream data;
    std::string top_plot, bottom_plot;
    int index = 0;
    for (const std::size_t i : members) {
      const std::string r = panel_blocks(a, i, top, use_calls, index, data, p.id);
      if (!r.empty()) top_plot += (top_plot.empty() ? "plot " : ", \\\n     ") + r;
      if (!two_panels) continue;
      const std::string f = panel_blocks(a, i, bottom, use_calls, index, data, p.id);
      if (!f.empty()) bottom_plot += (bottom_plot.empty() ? "plot " : ", \\\n     ") + f;
    }
    // Tics: every commit when few, else about 24 of them and every marked one.
    const std::vector<std::size_t> all(xs.begin(), xs.end());
    const std::size_t every = std::max<std::size_t>(1, (all.size() + 23) / 24);
    std::string labelled, unlabelled;
    for (std::size_t k = 0; k < all.size(); ++k) {
      const bool show = k % every == 0 || k + 1 == all.size() || marked.contains(all[k]);
      const std::string label = show ? a.view.commits[all[k]].id.substr(0, 7) : "";
      labelled += fmt::format("{}'{}' {}", labelled.empty() ? "" : ", ", label, all[k]);
      unlabelled += fmt::format("{}'' {}", unlabelled.empty() ? "" : ", ", all[k]);
    }
    // Steps: a vertical line between the commit before and the first after, in both panels,
    // labelled once, in the panel of the measure they were found in. A counted change is exact:
    // two decimals.
    std::string arrows, labels;
    for (const std::size_t i : members) {
      const Series& s = a.view.series[i];
      for (const auto& step : a.fits[i].fit.steps) {
        const std::size_t at = s.commits[step.at].commit, before = s.commits[step.at - 1].commit;
        const double x = (static_cast<double>(at) + static_cast<double>(before)) / 2;
        const char* colour = is_slowdown(a.fits[i].measure, step.change) ? kSlowerColour : kFasterColour;
        arrows += fmt::format("set arrow from {0}, graph 0 to {0}, graph 1 nohead lw 2 dt 3 lc rgb '{1}'\n",
                              plot_number(x), colour);
        const std::string size = group.counted ? fmt::format("{:+.2f}%", 100 * step.change)
                                               : fmt::format("{:+.1f}%", 100 * step.change);
        labels += fmt::format("set label {} at {}, graph 0.04 rotate by 90 left offset -0.9,0 "
                              "textcolor rgb '{}' font 'sans,9'\n",
                              gp_label(fmt::format("{} at {}", size, a.view.commits[at].id.substr(0, 7))),
                              plot_number(x), colour);
      }
    }
    const bool labels_below = !group.counted && std::any_of(members.begin(), members.end(), [&](std::size_t i) {
      return a.fits[i].measure == Series::Measure::fraction;
    });
    const std::string top_name = group.counted ? "estimated cycles per call" : use_calls ? "calls per second" : unit;
    const std::string bottom_name = group.counted ? "instructions per call" : "fraction of the same-run probe";
    const double x_low = static_cast<double>(all.front()) - 0.6, x_high = static_cast<double>(all.back()) + 0.6;
    std::ostringstream script;
    script << fmt::format("set xrange [{}:{}]\nset offsets 0, 0, graph 0.06, graph 0.06\n", plot_number(x_low),
                          plot_number(x_high));
    // Counts run to millions: SI prefixes (3.52M) keep the tick labels narrow enough for the
    // axis label to stay inside the margin.
    if (group.counted) script << "set format y '%.3s%c'\n";
    if (bottom_plot.empty()) {
      script << fmt::format("set title {}\nset ylabel {}\nset xlabel 'commit (oldest left)'\n"
                            "set xtics ({}) rotate by 35 right font 'sans,8'\nset key outside right top\n{}{}{}\n",
                            gp_label(p.title), gp_label(top_name), labelled, arrows, labels, top_plot);
      p.height = 420;
    } else {
      script << "set multiplot layout 2,1 margins 0.09,0.80,0.14,0.92 spacing 0,0.05 title "
             << gp_label(p.title) << " font 'sans,13'\n"
             << fmt::format("set ylabel {}\nset xtics ({})\nset key outside right top\n{}{}{}\n",
                            gp_label(top_name), unlabelled, arrows, labels_below ? "" : labels, top_plot)
             << fmt::format("unset label\nset ylabel {}\n"
                            "set xlabel 'commit (oldest left)'\nset xtics ({}) rotate by 35 right font 'sans,8'\n"
                            "unset key\n{}{}\nunset multiplot\n",
                            gp_label(bottom_name), labelled, labels_below ? labels : "", bottom_plot);
    }
    p.script = script.str();
    p.data = "# " + p.title + ": x = commit in the page's order (history.md, Commits)\n" + data.str();
    p.caption = group.counted
                    ? "Counted under callgrind, against commit order: estimated cycles per call above, "
                      "instructions per call below; dots are runs (counts repeat exactly between "
                      "processes), the line a commit's median, dashed the levels between steps; a dotted "
                      "vertical line is a step (red slower, green faster)."
                    : fmt::format(
                          "{} against commit order{}: dots are runs (one process each), the line a commit's "
                          "median, the band the range of its runs, dashed the fitted levels; a dotted vertical "
                          "line is a step (red slower, green faster).",
                          top_name, bottom_plot.empty() ? "" : ", and the fraction of the same-run probe below");
    specs.emplace(p.id, std::move(p));
  }
  return specs;
}

}  // namespace ropecheck::history
