// step_rows() and build_history_page() (history_page.h).
#include "history/history_page.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "history/history_plots.h"
#include "history/iso_time.h"

namespace ropecheck::history {
namespace {

std::string date_of(std::int64_t time) { return format_utc(time).substr(0, 10); }

// The geometric mean of a run's value (`of`) over the series' commits [first, last]; 0 when none.
double geometric_mean(const Series& s, std::size_t first, std::size_t last, double (*of)(const RunValue&)) {
  double sum = 0;
  std::size_t n = 0;
  for (std::size_t c = first; c <= last; ++c) {
    for (const auto& r : s.commits[c].runs) {
      if (of(r) > 0) sum += std::log(of(r)), ++n;
    }
  }
  return n == 0 ? 0 : std::exp(sum / static_cast<double>(n));
}

double rate_of(const RunValue& r) { return r.rate; }
double instructions_of(const RunValue& r) { return r.instructions; }

// A counted change is exact: two decimals show a 1% step and its neighbours apart.
std::string counted_percent(double change) { return fmt::format("{:+.2f}%", 100 * change); }

// What differs between the build of the last run before a step and the first after it: a step
// there may be the toolchain's rather than the code's.
std::string environment_change(const HistoryAnalysis& a, const Series& s, std::size_t at) {
  const Entry& before = a.view.entries[s.commits[at - 1].runs.back().entry].entry;
  const Entry& after = a.view.entries[s.commits[at].runs.front().entry].entry;
  std::string out;
  const auto note = [&](const char* what, const std::string& x, const std::string& y) {
    if (x != y) out += fmt::format("{}{} {} -> {}", out.empty() ? "" : "; ", what, x.empty() ? "-" : x, y.empty() ? "-" : y);
  };
  note("compiler", before.build.compiler, after.build.compiler);
  note("flags", before.build.cxx_flags, after.build.cxx_flags);
  note("OpenBLAS", before.build.openblas, after.build.openblas);
  note("OpenBLAS threads", std::to_string(before.build.openblas_threads), std::to_string(after.build.openblas_threads));
  return out;
}

std::string join_sorted(const std::set<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + (i.empty() ? std::string("-") : i);
  return out;
}

}  // namespace

std::string signed_percent(double change) { return fmt::format("{:+.1f}%", 100 * change); }

std::vector<StepRow> step_rows(const HistoryAnalysis& a) {
  std::vector<StepRow> rows;
  for (std::size_t i = 0; i < a.view.series.size(); ++i) {
    const Series& s = a.view.series[i];
    const StepFit& fit = a.fits[i].fit;
    for (std::size_t k = 0; k < fit.steps.size(); ++k) {
      const Step& step = fit.steps[k];
      const CommitRef& commit = a.view.commits[s.commits[step.at].commit];
      const CommitRef& after = a.view.commits[s.commits[step.at - 1].commit];
      StepRow row;
      row.series = i;
      row.step = k;
      row.case_name = s.case_name;
      row.line = a.view.lines[s.line].label;
      row.commit = fmt::format("{} ({})", short_commit(commit.id), date_of(commit.time));
      row.after = short_commit(after.id);
      const bool counted = a.fits[i].measure == Series::Measure::cycles;
      const auto percent = counted ? counted_percent : signed_percent;
      row.change = percent(step.change);
      if (a.fits[i].measure != Series::Measure::fraction) row.change += " of " + measure_name(s, a.fits[i].measure);
      row.interval = counted ? "(exact)"
                             : fmt::format("[{}, {}]", signed_percent(step.low), signed_percent(step.high));
      const StepSegment& before_seg = fit.segments[k];
      const StepSegment& after_seg = fit.segments[k + 1];
      // Beside the measure: the rate on a timed line, the instructions on a counted one.
      const auto of = counted ? instructions_of : rate_of;
      const double before = geometric_mean(s, before_seg.first, before_seg.last, of);
      const double after_level = geometric_mean(s, after_seg.first, after_seg.last, of);
      row.rate_change = before > 0 && after_level > 0
                            ? fmt::format("{} {}", percent(after_level / before - 1),
                                          counted ? "instructions" : s.rate_unit)
                            : "-";
      // Where the line is now, against where it was before this step: has it recovered?
      const double now = std::expm1(fit.segments.back().level - before_seg.level);
      const double threshold =
          (counted ? a.settings.min_counted_step_percent : a.settings.min_step_percent) / 100;
      row.now = k + 1 == fit.steps.size() ? "(the newest level)"
                : std::fabs(now) < threshold ? fmt::format("recovered ({})", percent(now))
                                             : percent(now);
      row.environment = environment_change(a, s, step.at);
      rows.push_back(std::move(row));
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [&](const StepRow& x, const StepRow& y) {
    const auto cx = a.view.series[x.series].commits[a.fits[x.series].fit.steps[x.step].at].commit;
    const auto cy = a.view.series[y.series].commits[a.fits[y.series].fit.steps[y.step].at].commit;
    return cx < cy;
  });
  return rows;
}

ReportDoc build_history_page(const HistoryAnalysis& a, const std::map<std::string, Figure>& figures,
                             const std::string& history_dir) {
  ReportDoc doc;
  doc.title = "ropecheck: performance over time";
  const auto& v = a.view;
  std::size_t runs = v.entries.size();

  // Steps first: when a case got slower or faster, at which commit, by how much, is what the page
  // is opened for; how they were found, the machines, the commits and the plots follow.
  doc.blocks.emplace_back(Heading{2, "Steps"});
  const auto rows = step_rows(a);
  const bool any_counted = std::any_of(v.lines.begin(), v.lines.end(), [](const LineRef& l) { return l.counted; });
  if (rows.empty()) {
    doc.blocks.emplace_back(Paragraph{fmt::format(
        "No step of {} or more in {} run(s) of {} commit(s) on {} machine line(s), at the level tested (below){}.",
        signed_percent(a.settings.min_step_percent / 100).substr(1), runs, v.commits.size(), v.lines.size(),
        any_counted ? fmt::format(", nor of more than {} on a counted line",
                                  counted_percent(a.settings.min_counted_step_percent / 100).substr(1))
                    : "")});
  } else {
    doc.blocks.emplace_back(Paragraph{fmt::format(
        "{} step(s) found in {} run(s) of {} commit(s) on {} machine line(s), oldest commit first: the commit that "
        "introduced each, the case, and the size of the change with its interval.",
        rows.size(), runs, v.commits.size(), v.lines.size())});
    Table t;
    t.header = {"commit (date)", "case", "change", "interval", "rate change", "now, against before", "machine",
                "after", "what else changed"};
    t.numeric = {false, false, true, true, true, false, false, false, false};
    for (const auto& r : rows) {
      const bool slower = is_slowdown(a.fits[r.series].measure, a.fits[r.series].fit.steps[r.step].change);
      t.rows.push_back({{"`" + r.commit + "`", ""}, {"`" + r.case_name + "`", ""}, {r.change, slower ? "fail" : "pass"},
                        {r.interval, ""}, {r.rate_change, ""}, {r.now, ""}, {r.line, ""}, {"`" + r.after + "`", ""},
                        {r.environment.empty() ? "-" : r.environment, ""}});
    }
    doc.blocks.emplace_back(std::move(t));
  }
  const double level = a.settings.alpha / static_cast<double>(std::max<std::size_t>(a.tests, 1));
  const bool any_timed = std::any_of(v.lines.begin(), v.lines.end(), [](const LineRef& l) { return !l.counted; });
  if (any_timed) doc.blocks.emplace_back(Paragraph{fmt::format(
      "How: per case and machine, the runs in commit order (each run one process; its value the "
      "median of its repetitions) are fitted with piecewise-constant levels by a penalised L1 "
      "step fit (as airspeed velocity does: one slow process moves no level); each break is then "
      "tested with the gate's statistics, the difference of the mean log measure either side "
      "against the run-to-run noise (the larger of the spread within the levels and the "
      "successive-difference estimate), a two-sided t test at alpha / m = {} / {} = {:.3g} (m: "
      "every commit boundary on this page, so the chance of any false mark stays near {}), and "
      "kept when it is also at least {} with two runs or more on each side. A break not kept is "
      "merged away and the rest tested again. The interval is at the same level. The measure is "
      "the fraction of the same-run probe where every run has it (the quieter one, "
      "gate/README.md). A step at the newest commit shows once that commit has a few runs.",
      a.settings.alpha, a.tests, level, a.settings.alpha,
      signed_percent(a.settings.min_step_percent / 100).substr(1))});
  if (any_counted) {
    doc.blocks.emplace_back(Paragraph{fmt::format(
        "Counted lines (`counted-...`) are judged otherwise: their runs are callgrind's counts with a "
        "simulated cache, which repeat exactly from process to process of one build, so a change "
        "between two commits is the code's, exactly. The measure is the estimated cycles per call "
        "(lower is better); a step is marked between consecutive commits whose values differ by more "
        "than {}, one run each side sufficing{}.",
        counted_percent(a.settings.min_counted_step_percent / 100).substr(1),
        any_timed ? ", and is not counted in m above" : "")});
  }

  // Machines.
  doc.blocks.emplace_back(Heading{2, "Machines"});
  Table machines;
  machines.header = {"line", "colour", "CPU", "logical CPUs", "ISA levels (dispatched)", "OpenBLAS core",
                     "build type", "compilers", "runs", "commits", "dates"};
  machines.numeric = {false, false, false, true, false, false, false, false, true, true, false};
  for (std::size_t l = 0; l < v.lines.size(); ++l) {
    const LineRef& line = v.lines[l];
    const Entry& latest = v.entries[line.latest].entry;
    std::set<std::string> compilers;
    std::int64_t first = 0, last = 0;
    for (const auto& s : v.entries) {
      if (s.entry.machine.id != line.machine_id || s.entry.build.build_type != line.build_type) continue;
      compilers.insert(s.entry.build.compiler);
    }
    first = v.commits[line.commits.front()].time;
    last = v.commits[line.commits.back()].time;
    std::string levels;
    for (const auto& isa : latest.machine.isa_levels) levels += (levels.empty() ? "" : " ") + isa;
    if (line.counted) {
      // The simulated machine is the line; the host is whichever ran Valgrind last.
      machines.rows.push_back({{line.label, ""}, {line_colour(l), ""},
                               {fmt::format("simulated: {} (host: {})", latest.counted->simulated_caches,
                                            latest.machine.cpu_model), ""},
                               {"-", ""}, {fmt::format("counted at {}", latest.counted->counted_isa), ""}, {"-", ""},
                               {"-", ""}, {latest.counted->valgrind, ""}, {std::to_string(line.runs), ""},
                               {std::to_string(line.commits.size()), ""},
                               {fmt::format("{} .. {}", date_of(first), date_of(last)), ""}});
      continue;
    }
    machines.rows.push_back({{line.label, ""}, {line_colour(l), ""}, {latest.machine.cpu_model, ""},
                             {std::to_string(latest.machine.logical_cpus), ""},
                             {fmt::format("{} ({})", levels, latest.machine.dispatched_isa), ""},
                             {latest.machine.openblas_core.empty() ? "-" : latest.machine.openblas_core, ""},
                             {line.build_type, ""}, {join_sorted(compilers), ""}, {std::to_string(line.runs), ""},
                             {std::to_string(line.commits.size()), ""},
                             {fmt::format("{} .. {}", date_of(first), date_of(last)), ""}});
  }
  doc.blocks.emplace_back(std::move(machines));
  for (const LineRef& line : v.lines) {
    if (!line.counted) continue;
    const EntryCounted& c = *v.entries[line.latest].entry.counted;
    doc.blocks.emplace_back(Paragraph{fmt::format(
        "`{}`: counted under {} at the {} kernel level{}, simulated caches {}; estimated cycles = {}.", line.label,
        c.valgrind, c.counted_isa, c.isa_note.empty() ? "" : " (" + c.isa_note + ")", c.simulated_caches,
        c.model.formula())});
  }

  // Commits.
  doc.blocks.emplace_back(Heading{2, "Commits"});
  Table commits;
  commits.header = {"x", "commit", "date (UTC)", "branch", "subject", "runs"};
  commits.numeric = {true, false, false, false, false, true};
  for (std::size_t c = 0; c < v.commits.size(); ++c) {
    const CommitRef& ref = v.commits[c];
    std::size_t n = 0;
    for (const auto& s : v.entries) n += s.entry.commit.id == ref.id;
    commits.rows.push_back({{std::to_string(c), ""}, {"`" + short_commit(ref.id) + "`", ""},
                            {format_utc(ref.time), ""}, {ref.branch.empty() ? "-" : ref.branch, ""},
                            {ref.subject.empty() ? "-" : ref.subject.substr(0, 100), ""}, {std::to_string(n), ""}});
  }
  doc.blocks.emplace_back(std::move(commits));

  // Cases: those with a step first, each in the order of the history.
  doc.blocks.emplace_back(Heading{2, "Cases"});
  doc.blocks.emplace_back(Paragraph{fmt::format(
      "{} case(s) from the history `{}`. Each case is drawn against commit order (oldest left): its rate above, "
      "its fraction of the probe measured in the same process below (counted: estimated cycles per call above, "
      "instructions per call below, in a plot of its own), one colour per machine: runs of different "
      "machines never share a line.",
      v.cases.size(), history_dir)});
  // A case's timed and counted plots are two (their units differ); those with a step first.
  std::vector<PlotGroup> order, later;
  for (auto& g : history_plot_groups(v)) {
    const bool stepped = std::any_of(g.series.begin(), g.series.end(), [&](std::size_t i) {
      return !a.fits[i].fit.steps.empty();
    });
    (stepped ? order : later).push_back(std::move(g));
  }
  order.insert(order.end(), later.begin(), later.end());
  for (const auto& g : order) {
    const auto figure = figures.find(g.id);
    if (figure != figures.end()) doc.blocks.emplace_back(figure->second);
    std::string notes;
    for (const std::size_t i : g.series) {
      const Series& s = v.series[i];
      const StepFit& fit = a.fits[i].fit;
      const std::string spread = g.counted
                                     ? fmt::format("runs of a commit {} apart", counted_percent(std::expm1(fit.noise)).substr(1))
                                     : fmt::format("noise {:.1f}% per run", 100 * std::expm1(fit.noise));
      notes += fmt::format("{}{}: {} run(s) of {} commit(s), {}, {} step(s)",
                           notes.empty() ? "`" + g.case_name + "` on " : "; on ", v.lines[s.line].label, s.runs(),
                           s.commits.size(), spread, fit.steps.size());
    }
    doc.blocks.emplace_back(Paragraph{notes + "."});
  }
  return doc;
}

}  // namespace ropecheck::history
