// run_probe_team: the same-run probe on a timed plugin call's thread count (probe_team.h).
#include "plugins/host/probe_team.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace ropecheck {
namespace {

// A spin-wait's pause: the core told that this thread waits (x86 pause, arm yield).
inline void spin_pause() {
#if defined(__x86_64__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

namespace {

// Thread i's contiguous share of the tokens, as bench/rope_cases.cc's my_tokens.
struct Share {
  float* q;
  std::size_t q_floats;
  float* k;
  std::size_t k_floats;
  std::int64_t tokens;
};
Share share_of(int i, int n, float* q, std::size_t q_floats, float* k, std::size_t k_floats, std::int64_t tokens) {
  const std::size_t q_row = q_floats / static_cast<std::size_t>(tokens);
  const std::size_t k_row = k_floats / static_cast<std::size_t>(tokens);
  const std::int64_t first = tokens * i / n, count = tokens * (i + 1) / n - first;
  const auto f = static_cast<std::size_t>(first), c = static_cast<std::size_t>(count);
  return {q + f * q_row, c * q_row, k + f * k_row, c * k_row, count};
}

void run_share(plugin_protocol::WorkerProbe probe, const Share& s, std::int64_t passes) {
  for (std::int64_t i = 0; i < passes; ++i) probe(s.q, s.q_floats, s.k, s.k_floats, s.tokens);
}

}  // namespace

double seconds_on(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

ProbeTeamResult run_probe_team(plugin_protocol::WorkerProbe probe, float* q, std::size_t q_floats, float* k,
                               std::size_t k_floats, std::int64_t tokens, int threads, double min_seconds) {
  const int n = static_cast<int>(std::clamp<std::int64_t>(threads, 1, std::max<std::int64_t>(tokens, 1)));
  ProbeTeamResult result;
  if (n == 1) {
    // One thread asked: its CPU time, as the built-ins' (bench/same_run_limit.h); more asked but
    // one token: the wall clock, as the call was timed.
    const clockid_t clock = threads > 1 ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID;
    const double start = seconds_on(clock);
    for (std::int64_t batch = 1;; batch *= 2) {  // at least one pass
      run_share(probe, {q, q_floats, k, k_floats, tokens}, batch);
      result.passes += batch;
      result.seconds = seconds_on(clock) - start;
      if (result.seconds >= min_seconds) return result;
    }
  }
  // The others wait for a batch by spinning on `batch_number` (a few microseconds of waking per
  // batch would be counted in against a decode-sized pass), run it and count themselves done.
  std::atomic<std::int64_t> batch_number{0}, batch_passes{0};
  std::atomic<int> done{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> team;
  for (int i = 1; i < n; ++i) {
    team.emplace_back([&, i] {
      const Share mine = share_of(i, n, q, q_floats, k, k_floats, tokens);
      for (std::int64_t seen = 0;;) {
        while (batch_number.load(std::memory_order_acquire) == seen && !stop.load(std::memory_order_acquire)) {
          spin_pause();
        }
        if (stop.load(std::memory_order_acquire)) return;
        seen = batch_number.load(std::memory_order_acquire);
        run_share(probe, mine, batch_passes.load(std::memory_order_relaxed));
        done.fetch_add(1, std::memory_order_acq_rel);
      }
    });
  }
  const Share mine = share_of(0, n, q, q_floats, k, k_floats, tokens);
  for (std::int64_t batch = 1;; batch *= 2) {
    done.store(0, std::memory_order_relaxed);
    batch_passes.store(batch, std::memory_order_relaxed);
    const double start = seconds_on(CLOCK_MONOTONIC);
    batch_number.fetch_add(1, std::memory_order_acq_rel);
    run_share(probe, mine, batch);
    while (done.load(std::memory_order_acquire) != n - 1) spin_pause();
    result.seconds += seconds_on(CLOCK_MONOTONIC) - start;
    result.passes += batch;
    if (result.seconds >= min_seconds) break;
  }
  stop.store(true, std::memory_order_release);
  for (std::thread& t : team) t.join();
  return result;
}

}  // namespace ropecheck
