// The same-run probe at a timed plugin call's thread count (plugin_worker.cc; for a Python
// function, which cannot run the host's code, python_process.cc in the host): as the built-ins'
// benchmark threads each probe their own contiguous share of the tokens at once
// (bench/rope_cases.cc), `threads` threads here each run the probe over their share, together,
// timed on the wall clock from the start of a batch to the last thread's end. A probe at one
// thread beside a call on two would credit the plugin with a limit it was never held to.
#pragma once

#include <time.h>

#include <cstddef>
#include <cstdint>

#include "plugins/host/plugin_protocol.h"

namespace ropecheck {

// Seconds on `clock` (CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID) as a double.
double seconds_on(clockid_t clock);

// A timed call's probe runs at least this long (and at least a quarter of the call's time), in
// doubling batches: reading a clock costs about a fifth of a decode-sized pass, so a few passes
// alone would count it in.
inline constexpr double kMinProbeSeconds = 50e-6;

struct ProbeTeamResult {
  double seconds = 0;       // wall time of the passes (one thread asked: its CPU time)
  std::int64_t passes = 0;  // passes over every token (each thread made this many of its share)
};

// Runs `probe` over q and k ([tokens][...] rows of q_floats / tokens and k_floats / tokens
// floats) on `threads` threads (1 to the token count; more are clamped to it), in batches that
// double, until at least `min_seconds` have passed. The calling thread is one of the team.
ProbeTeamResult run_probe_team(plugin_protocol::WorkerProbe probe, float* q, std::size_t q_floats, float* k,
                               std::size_t k_floats, std::int64_t tokens, int threads, double min_seconds);

}  // namespace ropecheck
