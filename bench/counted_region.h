// Counting instead of timing (`ropecheck count`, `ropecheck gate --measure counted`,
// counted/README.md). A bench process run by them sits under Valgrind's callgrind, started with
// instrumentation and collection off (--instr-atstart=no --collect-atstart=no), and is told
// `--counted-calls N`. Each case's timed loop then becomes: instrumentation on, two calls that are
// not collected (they warm the simulated caches, as the first passes of a timed loop warm the
// real ones), collection on, N calls, collection off. So the counts are the case's calls and nothing
// else: not the set-up, not the probe, not Google Benchmark's loop.
#pragma once

#include <benchmark/benchmark.h>
#include <valgrind/callgrind.h>

#include <cstdint>

#include "bench/slowdown.h"

namespace ropecheck::bench {

// 0: timing (the default). Set once per process by run_bench from --counted-calls.
void set_counted_calls(int calls);
int counted_calls();

// Whether this process runs on Valgrind's core (its client-request check: a few no-op
// instructions natively).
bool running_on_valgrind();

// True the first time a counted region is entered in this process. Google Benchmark may enter a
// case again (its iteration estimate): those entries count nothing more. One case per process
// (the counts of one callgrind run are one case's): run_bench refuses a filter matching more.
bool first_counted_entry();

// The calls of the counted region (count_calls below).
template <typename Step>
[[gnu::noinline]] void counted_calls_of(int calls, Step& step) {
  CALLGRIND_START_INSTRUMENTATION;
  // Two calls that are not collected: the first warms the simulated caches (as the first pass of
  // a timed loop warms the real ones), the second leaves them as every later call finds them
  // (after one warm call, the first collected call still missed ~3% more in L1 on decode). One
  // loop for all, so that its own code is warm too when collection starts.
  constexpr int kWarmCalls = 2;
  for (int i = 0; i < kWarmCalls + calls; ++i) {
    if (i == kWarmCalls) {
      reset_counted_slowdown();
      CALLGRIND_TOGGLE_COLLECT;
    }
    step();
  }
  CALLGRIND_TOGGLE_COLLECT;
  CALLGRIND_STOP_INSTRUMENTATION;
}

// The counted region of a case (see above), in place of its timed loop. Its calls run on a stack
// that starts at the same offset in a page in every process: where the stack lies otherwise
// depends on the environment's and the command line's size, and with it which simulated L1 sets
// the kernel's locals share with q and k (decode's 32 KiB fill the 32 KiB L1).
template <typename Step>
void count_calls(benchmark::State& state, Step&& step) {
  const int calls = counted_calls();
  if (first_counted_entry()) {
    constexpr std::uintptr_t kPage = 4096;
    const auto here = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
    auto* pad = static_cast<volatile char*>(__builtin_alloca(here % kPage + kPage));
    pad[0] = 0;  // used: the allocation stays
    counted_calls_of(calls, step);
  }
  for (auto _ : state) {
  }  // Google Benchmark's loop, empty: nothing in this process is timed
  state.counters["counted_calls"] = calls;
}

}  // namespace ropecheck::bench
