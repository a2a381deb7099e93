// A test-only knob for calibrating the CI gate (bench/README.md): ROPECHECK_BENCH_SLOWDOWN=ID=PCT
// (e.g. kernel/avx512=10) makes every timed call of implementation ID busy-wait for PCT per cent
// of the time the call itself took, i.e. a kernel PCT% slower, whatever the machine's speed.
// Unset (always, outside calibration): no cost but one branch per call.
// Counted (counted_region.h), a busy-wait would count as whatever instructions the spin ran in
// the time Valgrind took, which is neither PCT% nor the same twice. There the slowdown is a
// schedule instead: one more call each time the calls since the counted region began, times
// PCT/100, pass a whole number. Over N counted calls (N a multiple of 100/PCT) that is exactly
// PCT% more of the kernel's own instructions and memory traffic, and the same in every process.
#pragma once

#include <string_view>

namespace ropecheck::bench {

// The slowdown in per cent for implementation `id` (0: none). Throws InvalidInput for a
// malformed ROPECHECK_BENCH_SLOWDOWN.
double slowdown_percent(std::string_view id);

// Counted: the calls owed by the schedule after one more call (0 or more), and its reset at the
// start of a counted region.
int counted_extra_calls_due(double percent);
void reset_counted_slowdown();
bool counting();  // counted_region.h's counted_calls() > 0

// Runs call(), then spins for percent/100 of its duration (when percent > 0); counted, runs the
// calls the schedule owes instead.
template <typename Call>
void call_slowed(double percent, Call&& call);

}  // namespace ropecheck::bench

#include "bench/tick_count.h"

// Ticks (bench/tick_count.h), not a clock call: reading them costs a few ns, which even a
// decode-sized call (under a microsecond) does not notice, so the slowdown is the percentage asked
// for.
template <typename Call>
void ropecheck::bench::call_slowed(double percent, Call&& call) {
  if (percent <= 0) {
    call();
    return;
  }
  if (counting()) {
    call();
    for (int n = counted_extra_calls_due(percent); n > 0; --n) call();
    return;
  }
  const unsigned long long start = tick_count();
  call();
  const unsigned long long took = tick_count() - start;
  const auto until = start + took + static_cast<unsigned long long>(static_cast<double>(took) * percent / 100);
  while (tick_count() < until) {
  }
}
