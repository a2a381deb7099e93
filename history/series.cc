// arrange_history() (series.h).
#include "history/series.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/errors.h"
#include "history/iso_time.h"
#include "reports/stats.h"

namespace ropecheck::history {
namespace {

double median_or_zero(const std::vector<double>& samples) {
  return samples.empty() ? 0 : median(samples);
}

}  // namespace

Series::Measure Series::measure() const {
  bool fraction = true, rate = true, cycles = true;
  for (const auto& c : commits) {
    for (const auto& r : c.runs) {
      fraction = fraction && r.fraction > 0;
      rate = rate && r.rate > 0;
      cycles = cycles && r.estimated_cycles > 0;
    }
  }
  return cycles ? Measure::cycles : fraction ? Measure::fraction : rate ? Measure::rate : Measure::calls;
}

std::size_t Series::runs() const {
  std::size_t n = 0;
  for (const auto& c : commits) n += c.runs.size();
  return n;
}

double value_of(const RunValue& run, Series::Measure measure) {
  switch (measure) {
    case Series::Measure::fraction: return run.fraction;
    case Series::Measure::rate: return run.rate;
    case Series::Measure::calls: return run.calls_per_second;
    case Series::Measure::cycles: return run.estimated_cycles;
  }
  return 0;
}

bool lower_is_better(Series::Measure measure) { return measure == Series::Measure::cycles; }

bool is_slowdown(Series::Measure measure, double change) {
  return lower_is_better(measure) ? change > 0 : change < 0;
}

HistoryView arrange_history(std::vector<StoredEntry> entries) {
  HistoryView view;
  view.entries = std::move(entries);
  const auto& all = view.entries;

  // Commits: one date each, ordered by it.
  std::map<std::string, std::size_t> first_file;  // commit id -> entry index first seen
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto& e = all[i].entry;
    const auto [seen, fresh] = first_file.emplace(e.commit.id, i);
    if (!fresh && all[seen->second].entry.commit.time != e.commit.time) {
      throw InvalidInput(fmt::format("{}: commit {} dated {}, but {} in {}", all[i].file.string(),
                                     short_commit(e.commit.id), format_utc(e.commit.time),
                                     format_utc(all[seen->second].entry.commit.time),
                                     all[seen->second].file.string()));
    }
  }
  for (const auto& [id, i] : first_file) {
    CommitRef c{id, all[i].entry.commit.branch, all[i].entry.commit.subject, all[i].entry.commit.time,
                all[i].entry.commit.ancestors, all[i].entry.run.time};
    for (const auto& s : all) {
      if (s.entry.commit.id != id) continue;
      c.first_run = std::min(c.first_run, s.entry.run.time);
      c.ancestors = std::max(c.ancestors, s.entry.commit.ancestors);
      if (c.branch.empty()) c.branch = s.entry.commit.branch;
      if (c.subject.empty()) c.subject = s.entry.commit.subject;
    }
    view.commits.push_back(std::move(c));
  }
  std::sort(view.commits.begin(), view.commits.end(), [](const CommitRef& a, const CommitRef& b) {
    // A rebase or a quick series of commits gives many one committer date (to the second):
    // ancestry orders those.
    return std::tie(a.time, a.ancestors, a.first_run, a.id) < std::tie(b.time, b.ancestors, b.first_run, b.id);
  });
  std::map<std::string, std::size_t> commit_index;
  for (std::size_t i = 0; i < view.commits.size(); ++i) commit_index[view.commits[i].id] = i;

  // Lines: (machine, build type), in order of their first run's commit.
  std::map<std::string, std::set<std::string>> build_types;  // machine -> build types
  for (const auto& s : all) build_types[s.entry.machine.id].insert(s.entry.build.build_type);
  std::map<std::pair<std::string, std::string>, std::size_t> line_index;
  std::vector<std::size_t> order(all.size());
  for (std::size_t i = 0; i < all.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::tie(commit_index[all[a].entry.commit.id], all[a].entry.run.time, all[a].file) <
           std::tie(commit_index[all[b].entry.commit.id], all[b].entry.run.time, all[b].file);
  });
  std::vector<std::size_t> line_of(all.size());
  for (const std::size_t i : order) {
    const auto& e = all[i].entry;
    const auto key = std::make_pair(e.machine.id, e.build.build_type);
    auto it = line_index.find(key);
    if (it == line_index.end()) {
      LineRef line;
      line.machine_id = e.machine.id;
      line.build_type = e.build.build_type;
      line.counted = e.is_counted();
      line.label = build_types[e.machine.id].size() > 1 ? fmt::format("{} ({})", e.machine.id, e.build.build_type)
                                                        : e.machine.id;
      it = line_index.emplace(key, view.lines.size()).first;
      view.lines.push_back(std::move(line));
    }
    LineRef& line = view.lines[it->second];
    line.latest = i;  // `order` runs oldest to newest
    ++line.runs;
    const std::size_t c = commit_index[e.commit.id];
    if (line.commits.empty() || line.commits.back() != c) line.commits.push_back(c);
    line_of[i] = it->second;
  }

  // Cases in the order the runs list them, the newest run's order winning for new cases.
  std::set<std::string> known;
  for (const std::size_t i : order) {
    for (const auto& c : all[i].entry.cases) {
      if (known.insert(c.name).second) view.cases.push_back(c.name);
    }
  }
  std::map<std::pair<std::string, std::size_t>, Series> by_key;
  for (const std::size_t i : order) {
    for (const auto& c : all[i].entry.cases) {
      Series& s = by_key[{c.name, line_of[i]}];
      s.case_name = c.name;
      s.line = line_of[i];
      if (!c.rate_unit.empty()) s.rate_unit = c.rate_unit;  // the newest run's unit wins
      const std::size_t commit = commit_index[all[i].entry.commit.id];
      if (s.commits.empty() || s.commits.back().commit != commit) s.commits.push_back({commit, {}});
      RunValue run;
      if (c.counted) {
        run.estimated_cycles = c.counted->estimated_cycles;
        run.instructions = c.counted->instructions;
      } else {
        run.fraction = median_or_zero(c.limit_fraction);
        run.rate = median_or_zero(c.rate);
        run.calls_per_second = 1e9 / median(c.real_time_ns);
      }
      run.entry = i;
      run.rate_unit = c.rate_unit;
      s.commits.back().runs.push_back(run);
    }
  }
  // A rate in another unit than the series' (a case whose counters changed) is not comparable.
  for (auto& [key, s] : by_key) {
    for (auto& c : s.commits) {
      for (auto& r : c.runs) {
        if (r.rate_unit != s.rate_unit) r.rate = 0;
      }
    }
  }
  for (const auto& name : view.cases) {
    for (std::size_t l = 0; l < view.lines.size(); ++l) {
      const auto it = by_key.find({name, l});
      if (it != by_key.end()) view.series.push_back(std::move(it->second));
    }
  }
  return view;
}

}  // namespace ropecheck::history
