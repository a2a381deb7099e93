// RatioReporter: Google Benchmark's console output, plus the same-run table (ratio_table.h).
#include "bench/ratio_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

namespace ropecheck::bench {

RatioReporter::RatioReporter(OutputOptions options) : ConsoleReporter(options) {}

void RatioReporter::ReportRuns(const std::vector<Run>& runs) {
  ConsoleReporter::ReportRuns(runs);
  for (const Run& run : runs) {
    // One line per case, however many repetitions and aggregates report it.
    if (run.error_occurred) {
      errors_.emplace(run.run_name.str(), run.error_message);
      continue;
    }
    if (const auto failed = run.counters.find("oracle_failed"); failed != run.counters.end() && failed->second.value > 0) {
      errors_.emplace(run.run_name.str(), "timed with --time-failing, but " + run.report_label);
    }
    // With repetitions, only the median: one slow repetition (another build on the machine)
    // must not move the table.
    const bool single = run.run_type == Run::RT_Iteration && run.repetitions <= 1;
    const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
    if (!single && !median) continue;
    const auto counter = [&](const char* name) {
      const auto it = run.counters.find(name);
      return it == run.counters.end() ? 0.0 : it->second.value;
    };
    Rates r;
    r.rate = counter("bytes_per_second");
    if (r.rate == 0) {
      r.rate = counter("flops");
      r.flops = true;
    }
    r.probe_rate = counter("probe_rate");
    r.limit_fraction = counter("limit_fraction");
    r.threads = run.run_name.threads;
    // A plugin's case is registered with its thread count as an argument (rope_cases.cc).
    const std::string& args = run.run_name.args;
    rates_[{run.run_name.function_name + (args.empty() ? "" : "/" + args), run.threads}] = r;
  }
}

int RatioReporter::print_table(std::span<const Comparison> comparisons) {
  struct Row {
    std::string subject, versus, goal;
    double rate, versus_rate, ratio;
    bool flops;
  };
  std::vector<Row> rows;
  for (const Comparison& c : comparisons) {
    const auto end = rates_.upper_bound({c.subject, INT64_MAX});
    for (auto it = rates_.lower_bound({c.subject, 0}); it != end; ++it) {
      const Rates& s = it->second;
      Row row{s.threads.empty() ? c.subject : c.subject + "/" + s.threads, "same-run probe", "",
              s.rate, s.probe_rate, s.limit_fraction, s.flops};
      if (!c.reference.empty()) {
        const auto reference = rates_.find({c.reference, it->first.second});
        if (reference == rates_.end()) continue;  // filtered out, or failed
        row.versus = c.by_fraction ? c.reference + " (by limit_fraction)" : c.reference;
        row.versus_rate = reference->second.rate;
        row.ratio = c.by_fraction ? s.limit_fraction / reference->second.limit_fraction
                                  : s.rate / reference->second.rate;
      }
      if (c.goal > 0) row.goal = fmt::format(">= {:.2f} {}", c.goal, row.ratio >= c.goal ? "met" : "MISSED");
      rows.push_back(std::move(row));
    }
  }
  std::size_t subject_width = 4, versus_width = 2;
  for (const Row& r : rows) {
    subject_width = std::max(subject_width, r.subject.size());
    versus_width = std::max(versus_width, r.versus.size());
  }
  auto& out = GetOutputStream();
  out << "\nSame-run ratios (rates: GB/s = 1e9 bytes/s, GFLOP/s = 1e9 flops/s, causal half only "
         "for attention; medians where --repetitions > 1)\n";
  out << fmt::format("{:<{}}  {:>12}  {:<{}}  {:>12}  {:>6}  {}\n", "case", subject_width, "rate",
                     "vs", versus_width, "rate", "ratio", "goal (issue 3)");
  for (const Row& r : rows) {
    const char* unit = r.flops ? "GFLOP/s" : "GB/s";
    std::string line = fmt::format("{:<{}}  {:>12}  {:<{}}  {:>12}  {:>6.2f}  {}", r.subject,
                                   subject_width, fmt::format("{:.2f} {}", r.rate / 1e9, unit),
                                   r.versus, versus_width,
                                   fmt::format("{:.2f} {}", r.versus_rate / 1e9, unit), r.ratio,
                                   r.goal);
    line.erase(line.find_last_not_of(' ') + 1);  // no trailing blanks where there is no goal
    out << line << '\n';
  }
  out.flush();
  for (const auto& [name, error] : errors_) GetErrorStream() << "FAILED " << name << ": " << error << '\n';
  return errors_.empty() ? 0 : 1;
}

}  // namespace ropecheck::bench
