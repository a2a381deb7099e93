// A test-only knob for calibrating the CI gate (bench/README.md): ROPECHECK_BENCH_SLOWDOWN=ID=PCT
// (e.g. kernel/avx512=10) makes every timed call of implementation ID busy-wait for PCT per cent
// of the time the call itself took, i.e. a kernel PCT% slower, whatever the machine's speed.
// Unset (always, outside calibration): no cost but one branch per call.
#pragma once

#include <string_view>

namespace ropecheck::bench {

// The slowdown in per cent for implementation `id` (0: none). Throws InvalidInput for a
// malformed ROPECHECK_BENCH_SLOWDOWN.
double slowdown_percent(std::string_view id);

// Runs call(), then spins for percent/100 of its duration (when percent > 0).
template <typename Call>
void call_slowed(double percent, Call&& call);

}  // namespace ropecheck::bench

#include <chrono>

template <typename Call>
void ropecheck::bench::call_slowed(double percent, Call&& call) {
  if (percent <= 0) {
    call();
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  call();
  const auto took = std::chrono::steady_clock::now() - start;
  const auto until = start + took + std::chrono::duration_cast<std::chrono::steady_clock::duration>(took * (percent / 100));
  while (std::chrono::steady_clock::now() < until) {
  }
}
