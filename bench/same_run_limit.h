// The same-run limit of a benchmark case: right after the case's timed loop, in the same
// repetition and thread, the probe for the case's memory pattern (or its sgemm) runs over the
// same buffers, and the case reports
//   limit_fraction = probe time per pass / case time per pass   (1.0: as fast as the machine allows)
// plus the probe's own rate. Measured back to back, the two see the same machine: a ratio per
// repetition that a busier or slower machine moves far less than either time. The CI gate
// (`ropecheck compare`) compares these per-repetition fractions.
#pragma once

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>
#include <string>

namespace ropecheck::bench {

using Clock = std::chrono::steady_clock;

// One untimed pass (page faults, caches), then `probe` for at least a quarter of the case's
// timed loop (enough to time it to a few per cent; at least one pass), then the counters.
// `probe_amount`: bytes (or flops) one probe pass moves, reported as `probe_rate` (summed over
// threads, like the case's own rate).
template <typename Probe>
void report_limit(benchmark::State& state, std::chrono::duration<double> case_time, Probe&& probe,
                  double probe_amount) {
  probe();
  std::int64_t passes = 0;
  const auto start = Clock::now();
  std::chrono::duration<double> elapsed{0};
  do {
    probe();
    ++passes;
    elapsed = Clock::now() - start;
  } while (elapsed < case_time / 4);
  const double probe_seconds = elapsed.count() / static_cast<double>(passes);
  const double case_seconds = case_time.count() / static_cast<double>(state.iterations());
  using benchmark::Counter;
  state.counters["limit_fraction"] = Counter(probe_seconds / case_seconds, Counter::kAvgThreads);
  state.counters["probe_rate"] = Counter(probe_amount / probe_seconds);
}

}  // namespace ropecheck::bench
