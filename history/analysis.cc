// analyse_history() and analyse_entries() (analysis.h).
#include "history/analysis.h"

#include <fmt/format.h>

#include <cmath>

#include "core/errors.h"
#include "history/counted_steps.h"
#include "history/store.h"

namespace ropecheck::history {

std::string measure_name(const Series& series, Series::Measure measure) {
  switch (measure) {
    case Series::Measure::fraction: return "fraction of the same-run probe";
    case Series::Measure::rate: return series.rate_unit;
    case Series::Measure::calls: return "calls/s";
    case Series::Measure::cycles: return "estimated cycles per call (counted)";
  }
  return "";
}

HistoryAnalysis analyse_entries(std::vector<StoredEntry> entries, const StepSettings& settings) {
  if (!(settings.alpha > 0 && settings.alpha < 1)) {
    throw InvalidInput(fmt::format("--alpha {} is not in (0, 1)", settings.alpha));
  }
  if (!(settings.min_step_percent >= 0 && settings.min_step_percent < 100)) {
    throw InvalidInput(fmt::format("--min-step {} is not in [0, 100)", settings.min_step_percent));
  }
  if (!(settings.min_counted_step_percent >= 0 && settings.min_counted_step_percent < 100)) {
    throw InvalidInput(fmt::format("--min-counted-step {} is not in [0, 100)", settings.min_counted_step_percent));
  }
  HistoryAnalysis a;
  a.settings = settings;
  a.view = arrange_history(std::move(entries));
  // m counts the boundaries tested statistically: a counted line's are not (counted_steps.h).
  for (const auto& s : a.view.series) {
    if (!a.view.lines[s.line].counted) a.tests += s.commits.size() - 1;
  }
  for (const auto& s : a.view.series) {
    SeriesFit f;
    f.measure = s.measure();
    std::vector<std::vector<double>> log_runs;
    for (const auto& c : s.commits) {
      log_runs.emplace_back();
      for (const auto& r : c.runs) log_runs.back().push_back(std::log(value_of(r, f.measure)));
    }
    f.fit = f.measure == Series::Measure::cycles
                ? fit_counted_steps(log_runs, settings.min_counted_step_percent / 100)
                : fit_steps(log_runs, a.tests, settings);
    a.fits.push_back(std::move(f));
  }
  return a;
}

HistoryAnalysis analyse_history(const std::filesystem::path& dir, const std::string& filter,
                                const StepSettings& settings) {
  std::vector<StoredEntry> entries = read_history(dir, false);
  if (entries.empty()) {
    throw InvalidInput(fmt::format("--dir {}: no history entry there (record runs with `ropecheck "
                                   "history add --dir {} RUN_DIR`)",
                                   dir.string(), dir.string()));
  }
  if (!filter.empty()) {
    std::regex pattern;
    try {
      pattern = std::regex(filter, std::regex::extended);
    } catch (const std::regex_error& e) {
      throw InvalidInput(fmt::format("--filter '{}': not a regular expression: {}", filter, e.what()));
    }
    bool any = false;
    for (auto& stored : entries) {
      auto& cases = stored.entry.cases;
      std::erase_if(cases, [&](const EntryCase& c) { return !std::regex_search(c.name, pattern); });
      any = any || !cases.empty();
    }
    if (!any) throw InvalidInput(fmt::format("--filter '{}' matches no case of the history", filter));
    std::erase_if(entries, [](const StoredEntry& s) { return s.entry.cases.empty(); });
  }
  return analyse_entries(std::move(entries), settings);
}

}  // namespace ropecheck::history
