// The same-run table printed after Google Benchmark's own output (`ropecheck bench`, and the
// ropecheck_bench binary): per case its rate, its same-run probe's rate, and limit_fraction
// (same_run_limit.h), medians over repetitions; plus the level-to-level ratios issue 3 sets
// targets for. Google Benchmark cannot divide one benchmark's result by another's, so this
// console reporter keeps every run's counters and divides at the end.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace ropecheck::bench {

// One row of the table, by registered name (no /real_time, /threads: suffixes), matched at equal
// benchmark thread counts. reference "": the case against its own same-run probe
// (limit_fraction); otherwise the case's rate over the reference case's rate.
struct Comparison {
  std::string subject;
  std::string reference;
  double goal = 0;  // the target of issue 3 for this ratio; 0: none
  // The ratio of the two cases' limit_fraction medians, each against its own same-run probe,
  // instead of their rates: what a load that changes between the two cases moves far less.
  bool by_fraction = false;
};

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  explicit RatioReporter(OutputOptions options);

  void ReportRuns(const std::vector<Run>& runs) override;

  // Prints one line per comparison and thread count that ran (to the output stream), then every
  // case that reported an error or was timed despite a failed check (--time-failing), once each
  // (to the error stream). Returns 1 when a case failed its check (timed or not), else 0. A goal missed is shown, not
  // failed: on a shared machine it is a measurement, not a verdict.
  int print_table(std::span<const Comparison> comparisons);

 private:
  using Key = std::pair<std::string, std::int64_t>;  // registered name, benchmark threads
  struct Rates {
    double rate = 0;            // bytes/s, or flops/s where the case counts flops only
    bool flops = false;
    double probe_rate = 0;
    double limit_fraction = 0;
    std::string threads;        // "threads:N" when the benchmark was registered with Threads()
  };
  std::map<Key, Rates> rates_;
  std::map<std::string, std::string> errors_;  // case (run name) -> why it failed, once each
};

}  // namespace ropecheck::bench
