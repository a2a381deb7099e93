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

// The geometric mean of the series' rates over the commits [first, last]; 0 when none.
double mean_rate(const Series& s, std::size_t first, std::size_t last) {
  double sum = 0;
  std::size_t n = 0;
  for (std::size_t c = first; c <= last; ++c) {
    for (const auto& r : s.commits[c].runs) {
      if (r.rate > 0) sum += std::log(r.rate), ++n;
    }
  }
  return n == 0 ? 0 : std::exp(sum / static_cast<double>(n));
}

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
      row.change = signed_percent(step.change);
      if (a.fits[i].measure != Series::Measure::fraction) row.change += " of " + measure_name(s, a.fits[i].measure);
      row.interval = fmt::format("[{}, {}]", signed_percent(step.low), signed_percent(step.high));
      const StepSegment& before_seg = fit.segments[k];
      const StepSegment& after_seg = fit.segments[k + 1];
      const double rate_before = mean_rate(s, before_seg.first, before_seg.last);
      const double rate_after = mean_rate(s, after_seg.first, after_seg.last);
      row.rate_change = rate_before > 0 && rate_after > 0
                            ? fmt::format("{} {}", signed_percent(rate_after / rate_before - 1), s.rate_unit)
                            : "-";
      // Where the line is now, against where it was before this step: has it recovered?
      const double now = std::expm1(fit.segments.back().level - before_seg.level);
      row.now = k + 1 == fit.steps.size() ? "(the newest level)"
                : std::fabs(now) < a.settings.min_step_percent / 100
                    ? fmt::format("recovered ({})", signed_percent(now))
                    : signed_percent(now);
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
  if (rows.empty()) {
    doc.blocks.emplace_back(Paragraph{fmt::format(
        "No step of {} or more in {} run(s) of {} commit(s) on {} machine line(s), at the level tested (below).",
        signed_percent(a.settings.min_step_percent / 100).substr(1), runs, v.commits.size(), v.lines.size())});
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
      const bool slower = a.fits[r.series].fit.steps[r.step].change < 0;
      t.rows.push_back({{"`" + r.commit + "`", ""}, {"`" + r.case_name + "`", ""}, {r.change, slower ? "fail" : "pass"},
                        {r.interval, ""}, {r.rate_change, ""}, {r.now, ""}, {r.line, ""}, {"`" + r.after + "`", ""},
                        {r.environment.empty() ? "-" : r.environment, ""}});
    }
    doc.blocks.emplace_back(std::move(t));
  }
  const double level = a.settings.alpha / static_cast<double>(std::max<std::size_t>(a.tests, 1));
  doc.blocks.emplace_back(Paragraph{fmt::format(
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
    machines.rows.push_back({{line.label, ""}, {line_colour(l), ""}, {latest.machine.cpu_model, ""},
                             {std::to_string(latest.machine.logical_cpus), ""},
                             {fmt::format("{} ({})", levels, latest.machine.dispatched_isa), ""},
                             {latest.machine.openblas_core.empty() ? "-" : latest.machine.openblas_core, ""},
                             {line.build_type, ""}, {join_sorted(compilers), ""}, {std::to_string(line.runs), ""},
                             {std::to_string(line.commits.size()), ""},
                             {fmt::format("{} .. {}", date_of(first), date_of(last)), ""}});
  }
  doc.blocks.emplace_back(std::move(machines));

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
      "its fraction of the probe measured in the same process below, one colour per machine: runs of different "
      "machines never share a line.",
      v.cases.size(), history_dir)});
  const auto ids = history_plot_ids(v);
  std::vector<std::string> order;
  std::set<std::string> stepped;
  for (const auto& r : rows) stepped.insert(r.case_name);
  for (const auto& name : v.cases) {
    if (stepped.contains(name)) order.push_back(name);
  }
  for (const auto& name : v.cases) {
    if (!stepped.contains(name)) order.push_back(name);
  }
  for (const auto& name : order) {
    const auto figure = figures.find(ids.at(name));
    if (figure != figures.end()) doc.blocks.emplace_back(figure->second);
    std::string notes;
    for (std::size_t i = 0; i < v.series.size(); ++i) {
      const Series& s = v.series[i];
      if (s.case_name != name) continue;
      const StepFit& fit = a.fits[i].fit;
      notes += fmt::format("{}{}: {} run(s) of {} commit(s), noise {:.1f}% per run, {} step(s)",
                           notes.empty() ? "`" + name + "` on " : "; on ", v.lines[s.line].label, s.runs(),
                           s.commits.size(), 100 * std::expm1(fit.noise), fit.steps.size());
    }
    doc.blocks.emplace_back(Paragraph{notes + "."});
  }
  return doc;
}

}  // namespace ropecheck::history
