// RatioReporter: Google Benchmark's console output, plus the same-run ratio table (ratio_table.h).
#include "ratio_table.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <iostream>

namespace ropecheck::bench {
namespace {

// What Google Benchmark's default console reporter does with --benchmark_color=auto.
benchmark::ConsoleReporter::OutputOptions console_options() {
  return isatty(STDOUT_FILENO) ? benchmark::ConsoleReporter::OO_Color
                               : benchmark::ConsoleReporter::OO_None;
}

}  // namespace

RatioReporter::RatioReporter(std::string counter, std::string unit, std::string unit_meaning)
    : ConsoleReporter(console_options()),
      counter_(std::move(counter)),
      unit_(std::move(unit)),
      unit_meaning_(std::move(unit_meaning)) {}

void RatioReporter::ReportRuns(const std::vector<Run>& runs) {
  ConsoleReporter::ReportRuns(runs);
  for (const Run& run : runs) {
    if (run.error_occurred) {
      errors_.push_back(fmt::format("{}: {}", run.benchmark_name(), run.error_message));
      continue;
    }
    // With repetitions, only the median: one slow repetition (another build on the machine)
    // must not move the table.
    const bool single = run.run_type == Run::RT_Iteration && run.repetitions <= 1;
    const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
    const auto rate = run.counters.find(counter_);
    if ((single || median) && rate != run.counters.end()) {
      rates_[{run.run_name.function_name, run.threads}] = {rate->second.value,
                                                           run.run_name.threads};
    }
  }
}

int RatioReporter::print_table(std::span<const Comparison> comparisons) {
  struct Row {
    std::string subject, reference, goal;
    double subject_rate, reference_rate, ratio;
  };
  std::vector<Row> rows;
  for (const Comparison& c : comparisons) {
    const auto end = rates_.upper_bound({c.subject, INT64_MAX});
    for (auto it = rates_.lower_bound({c.subject, 0}); it != end; ++it) {
      const auto reference = rates_.find({c.reference, it->first.second});
      if (reference == rates_.end()) continue;  // filtered out, or failed
      const double ratio = it->second.value / reference->second.value;
      std::string goal;
      if (c.goal > 0) {
        goal = fmt::format(">= {:.2f} {}", c.goal, ratio >= c.goal ? "met" : "MISSED");
      }
      const std::string& threads = it->second.threads;
      rows.push_back({threads.empty() ? c.subject : c.subject + "/" + threads, c.reference, goal,
                      it->second.value / 1e9, reference->second.value / 1e9, ratio});
    }
  }
  std::size_t subject_width = 4, reference_width = 2;
  for (const Row& r : rows) {
    subject_width = std::max(subject_width, r.subject.size());
    reference_width = std::max(reference_width, r.reference.size());
  }
  auto& out = GetOutputStream();
  out << fmt::format("\nSame-run ratios ({}: {}; medians where --benchmark_repetitions > 1)\n",
                     unit_, unit_meaning_);
  out << fmt::format("{:<{}}  {:>8}  {:<{}}  {:>8}  {:>6}  {}\n", "case", subject_width, unit_,
                     "vs", reference_width, unit_, "ratio", "goal (issue 3)");
  for (const Row& r : rows) {
    std::string line = fmt::format("{:<{}}  {:>8.2f}  {:<{}}  {:>8.2f}  {:>6.2f}  {}", r.subject,
                                   subject_width, r.subject_rate, r.reference, reference_width,
                                   r.reference_rate, r.ratio, r.goal);
    line.erase(line.find_last_not_of(' ') + 1);  // no trailing blanks where there is no goal
    out << line << '\n';
  }
  out.flush();
  for (const std::string& e : errors_) GetErrorStream() << "FAILED " << e << '\n';
  return errors_.empty() ? 0 : 1;
}

}  // namespace ropecheck::bench
