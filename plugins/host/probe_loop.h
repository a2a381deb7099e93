// The same-run probe after a timed call (plugin_protocol.h, CallMessage::probe), wherever the
// call ran: in a plugin's worker (plugin_worker.cc) or, for a Python worker that cannot run the
// host's code, in the host over the same shared bytes (python_process.cc). System calls only: it
// runs in a forked child too.
#pragma once

#include <time.h>

#include <cstddef>
#include <cstdint>

#include "plugins/host/plugin_protocol.h"

namespace ropecheck {

// One thread: this thread's CPU time, as the built-ins are timed (bench/same_run_limit.h); more:
// the wall clock, where the other threads count too.
inline clockid_t timed_call_clock(std::int32_t threads) {
  return threads > 1 ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID;
}

inline double seconds_on(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// At least this long, and at least a quarter of the apply's time, in doubling batches (reading a
// clock costs about a fifth of a decode-sized pass: a few passes alone would count it in).
inline constexpr double kMinProbeSeconds = 50e-6;

// Runs the probe over q and k after an apply that took apply_seconds; fills the reply's probe
// fields.
inline void run_probe(plugin_protocol::WorkerProbe probe, float* q, std::size_t q_floats, float* k,
                      std::size_t k_floats, std::int64_t tokens, clockid_t clock,
                      plugin_protocol::ReplyMessage& reply) {
  const double start = seconds_on(clock);
  for (std::int64_t batch = 1;; batch *= 2) {  // at least one pass
    for (std::int64_t i = 0; i < batch; ++i) probe(q, q_floats, k, k_floats, tokens);
    reply.probe_passes += batch;
    reply.probe_seconds = seconds_on(clock) - start;
    if (reply.probe_seconds >= reply.apply_seconds / 4 && reply.probe_seconds >= kMinProbeSeconds) break;
  }
}

}  // namespace ropecheck
