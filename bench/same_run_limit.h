// The same-run limit of a benchmark case: the probe for the case's memory pattern (or its sgemm)
// runs over the same buffers, interleaved with the case's timed loop in slices of about a
// millisecond (the Google Benchmark timer paused meanwhile), and the case reports
//   limit_fraction = probe time per pass / case time per pass   (1.0: as fast as the machine allows)
// plus the probe's own rate. Interleaved that finely, the two see the same machine: a ratio per
// repetition that a busier or slower machine (another job, a neighbour on the SMT sibling, a
// frequency change) moves far less than either time. The CI gate (`ropecheck compare`) compares
// these per-repetition fractions.
// Both are timed in this thread's CPU time where the work runs on this thread: a shared machine
// that takes the core away for a while then moves neither side, where wall time would charge the
// pause to whichever side it fell in. Work on other threads (OpenBLAS with more than one thread)
// is timed on the wall clock.
#pragma once

#include <benchmark/benchmark.h>

#include <time.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <type_traits>

#include "bench/counted_region.h"
#include "bench/tick_count.h"

namespace ropecheck::bench {

// This thread's CPU time, as a std::chrono clock (CLOCK_THREAD_CPUTIME_ID: nanoseconds).
struct ThreadCpuClock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<ThreadCpuClock>;
  static constexpr bool is_steady = true;
  static time_point now() noexcept {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return time_point(duration(std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec));
  }
};

using WallClock = std::chrono::steady_clock;
using Clock = ThreadCpuClock;  // where the timed work runs on the benchmark's own thread

// Runs the case's timed loop, step() once per iteration, and the probe interleaved with it: after
// each slice of about a millisecond (read off the time-stamp counter, a few ns a read, so even a
// decode-sized step does not notice), the timer is paused and the probe runs for a quarter of the
// slice's time. Sets limit_fraction and probe_rate (`probe_amount`: bytes or flops one probe pass
// moves; summed over threads, like the case's own rate). TimeClock: Clock or WallClock.
// A rival (another way to do the same work, e.g. the fused call's two passes) may run in the
// same pauses, as long as the slice itself (at least one pass): the return value is its time per
// pass over the case's, a speed-up measured as finely interleaved as the limit; 0 without one.
struct NoRival {};
template <typename TimeClock = Clock, typename Step, typename Probe, typename Rival = NoRival>
double run_with_limit(benchmark::State& state, Step&& step, Probe&& probe, double probe_amount, Rival&& rival = {}) {
  constexpr bool kRival = !std::is_same_v<std::decay_t<Rival>, NoRival>;
  if (counted_calls() > 0) {  // counted, not timed: the case's calls only (counted_region.h)
    count_calls(state, step);
    return 0;
  }
  const unsigned long long kSliceTicks = ticks_per_millisecond();
  std::chrono::duration<double> case_time{0}, probe_time{0}, rival_time{0};
  std::int64_t passes = 0, rival_passes = 0;
  probe();  // untimed: page faults, caches
  if constexpr (kRival) rival();
  const auto close_slice = [&](typename TimeClock::time_point slice_start) {
    const std::chrono::duration<double> slice = TimeClock::now() - slice_start;
    case_time += slice;
    const auto probe_start = TimeClock::now();
    std::chrono::duration<double> elapsed{0};
    // Batches that double: reading the thread CPU clock is a system call (~0.2 us), as long as a
    // decode-sized probe pass, so it is not read after every pass.
    for (std::int64_t batch = 1; elapsed < slice / 4; batch *= 2) {
      for (std::int64_t i = 0; i < batch; ++i) probe();
      passes += batch;
      elapsed = TimeClock::now() - probe_start;
    }
    probe_time += elapsed;
    if constexpr (kRival) {
      const auto rival_start = TimeClock::now();
      std::chrono::duration<double> rival_elapsed{0};
      for (std::int64_t batch = 1; rival_elapsed < slice; batch *= 2) {
        for (std::int64_t i = 0; i < batch; ++i) rival();
        rival_passes += batch;
        rival_elapsed = TimeClock::now() - rival_start;
      }
      rival_time += rival_elapsed;
    }
  };
  auto slice_start = TimeClock::now();
  auto slice_ticks = tick_count();
  for (auto _ : state) {
    step();
    if (tick_count() - slice_ticks > kSliceTicks) {
      state.PauseTiming();
      close_slice(slice_start);
      state.ResumeTiming();
      slice_start = TimeClock::now();
      slice_ticks = tick_count();
    }
  }
  close_slice(slice_start);
  const double probe_seconds = probe_time.count() / static_cast<double>(passes);
  const double case_seconds = case_time.count() / static_cast<double>(state.iterations());
  using benchmark::Counter;
  state.counters["limit_fraction"] = Counter(probe_seconds / case_seconds, Counter::kAvgThreads);
  state.counters["probe_rate"] = Counter(probe_amount / probe_seconds);
  if (!kRival || rival_passes == 0) return 0;
  return rival_time.count() / static_cast<double>(rival_passes) / case_seconds;
}

}  // namespace ropecheck::bench
