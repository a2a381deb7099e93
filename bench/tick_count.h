// A cheap monotonic tick for the bench's inner loops, where a clock call per iteration would be
// timed with the call: the time-stamp counter on x86-64 (rdtsc), the generic timer's virtual
// count on aarch64 (cntvct_el0, a few ns to read, at the fixed rate cntfrq_el0 gives).
#pragma once

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include <chrono>

namespace ropecheck::bench {

inline unsigned long long tick_count() {
#if defined(__x86_64__)
  return __rdtsc();
#elif defined(__aarch64__)
  unsigned long long ticks;
  asm volatile("mrs %0, cntvct_el0" : "=r"(ticks));
  return ticks;
#else
  return static_cast<unsigned long long>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

// About a millisecond of ticks: the TSC at 2 GHz (its rate is the CPU's nominal clock, 1.5 to 4
// GHz: 0.5 to 1.3 ms), the generic timer at its own stated rate.
inline unsigned long long ticks_per_millisecond() {
#if defined(__x86_64__)
  return 2'000'000;
#elif defined(__aarch64__)
  unsigned long long hz;
  asm volatile("mrs %0, cntfrq_el0" : "=r"(hz));
  return hz / 1000 > 0 ? hz / 1000 : 1;
#else
  return std::chrono::steady_clock::period::den / std::chrono::steady_clock::period::num / 1000;
#endif
}

}  // namespace ropecheck::bench
