// The same-run ratio table that rope_bench and attention_bench print after Google Benchmark's own
// output. Google Benchmark cannot divide one benchmark's result by another's, so the console
// reporter below also keeps every run's rate, and the table divides them at the end: a ratio of
// two rates measured minutes apart in one process survives a noisy machine far better than either.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace ropecheck::bench {

// One row of the table: subject's rate over reference's rate, both as registered with
// RegisterBenchmark (no /real_time, /threads: suffixes), matched at equal benchmark thread counts.
struct Comparison {
  std::string subject;
  std::string reference;  // a same-run probe, or a lower ISA level
  double goal = 0;        // the target of issue 3 for this ratio; 0: none
};

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  // counter: the rate compared ("bytes_per_second", "flops"); unit: how the table names 1e9 of
  // it per second ("GB/s"), unit_meaning: that spelled out ("1e9 bytes/s").
  RatioReporter(std::string counter, std::string unit, std::string unit_meaning);

  void ReportRuns(const std::vector<Run>& runs) override;

  // Prints one line per comparison and thread count where both sides ran (to the output stream),
  // then every run that reported an error (to the error stream). Returns the exit status:
  // 1 when a run reported an error (an implementation failed its check), else 0. A goal missed
  // is shown, not failed: on a shared machine it is a measurement, not a verdict.
  int print_table(std::span<const Comparison> comparisons);

 private:
  using Key = std::pair<std::string, std::int64_t>;  // registered name, benchmark threads
  std::string counter_, unit_, unit_meaning_;
  struct Rate {
    double value;         // the median aggregate, or the single run without repetitions
    std::string threads;  // "threads:N" when the benchmark was registered with Threads()
  };
  std::map<Key, Rate> rates_;
  std::vector<std::string> errors_;
};

}  // namespace ropecheck::bench
