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

#include <x86intrin.h>

// The time-stamp counter, not a clock call: reading it costs a few ns, which even a decode-sized
// call (under a microsecond) does not notice, so the slowdown is the percentage asked for.
template <typename Call>
void ropecheck::bench::call_slowed(double percent, Call&& call) {
  if (percent <= 0) {
    call();
    return;
  }
  const unsigned long long start = __rdtsc();
  call();
  const unsigned long long took = __rdtsc() - start;
  const auto until = start + took + static_cast<unsigned long long>(static_cast<double>(took) * percent / 100);
  while (__rdtsc() < until) {
  }
}
