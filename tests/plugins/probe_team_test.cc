// The same-run probe at a timed plugin call's thread count (plugins/host/probe_team.h): each of
// `threads` threads probes its own contiguous share of the tokens, as the built-ins' benchmark
// threads do, so that a plugin at 2 threads is held to the 2-thread limit, not the 1-thread one.
//   ctest --preset default -R ProbeTeam
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "plugins/host/plugin_host.h"
#include "plugins/host/probe_team.h"
#include "tests/support/test_process.h"

namespace ropecheck {
namespace {

// What one probe call saw: its thread, the first token of its share and the share's tokens.
struct ProbeCall {
  std::thread::id thread;
  std::int64_t first_token, tokens;
};
std::mutex probe_calls_lock;
std::vector<ProbeCall> probe_calls;
float* probe_q_base = nullptr;
constexpr std::size_t kRowFloats = 4;  // q: 4 floats a token, k: 2

void recording_probe(float* q, std::size_t q_floats, float*, std::size_t k_floats, std::int64_t tokens) {
  EXPECT_EQ(q_floats, kRowFloats * static_cast<std::size_t>(tokens));
  EXPECT_EQ(k_floats, 2 * static_cast<std::size_t>(tokens));
  const std::lock_guard<std::mutex> hold(probe_calls_lock);
  probe_calls.push_back({std::this_thread::get_id(), (q - probe_q_base) / static_cast<std::ptrdiff_t>(kRowFloats), tokens});
}

TEST(ProbeTeam, EachThreadProbesItsOwnShareOfTheTokens) {
  constexpr std::int64_t kTokens = 7;
  std::vector<float> q(kRowFloats * kTokens), k(2 * kTokens);
  probe_q_base = q.data();
  for (const int threads : {1, 2, 3}) {
    probe_calls.clear();
    const ProbeTeamResult r = run_probe_team(recording_probe, q.data(), q.size(), k.data(), k.size(), kTokens,
                                             threads, 1e-4);
    EXPECT_GE(r.seconds, 1e-4);
    ASSERT_GT(r.passes, 0);
    std::set<std::thread::id> seen_threads;
    std::vector<std::int64_t> probed(kTokens, 0);  // passes per token
    for (const ProbeCall& c : probe_calls) {
      seen_threads.insert(c.thread);
      for (std::int64_t t = c.first_token; t < c.first_token + c.tokens; ++t) ++probed[static_cast<std::size_t>(t)];
    }
    EXPECT_EQ(seen_threads.size(), static_cast<std::size_t>(threads));
    EXPECT_EQ(probe_calls.size(), static_cast<std::size_t>(threads * r.passes));
    for (std::int64_t t = 0; t < kTokens; ++t) {  // every token probed once a pass, by one thread
      EXPECT_EQ(probed[static_cast<std::size_t>(t)], r.passes) << "token " << t << " at " << threads << " threads";
    }
  }
}

TEST(ProbeTeam, NoMoreThreadsThanTokens) {
  std::vector<float> q(kRowFloats), k(2);
  probe_q_base = q.data();
  probe_calls.clear();
  const ProbeTeamResult r = run_probe_team(recording_probe, q.data(), q.size(), k.data(), k.size(), 1, 4, 1e-5);
  ASSERT_GT(r.passes, 0);
  for (const ProbeCall& c : probe_calls) EXPECT_EQ(c.thread, std::this_thread::get_id());
}

// Through a plugin's worker (a fork of this process): what the probe saw is kept in memory
// shared with it.
struct SharedProbeRecord {
  std::atomic<int> calls;
  std::atomic<std::int64_t> largest_share;
  std::atomic<int> threads_seen;
  std::atomic<pid_t> thread_ids[8];
};
SharedProbeRecord* shared_record = nullptr;

void recording_probe_in_worker(float*, std::size_t, float*, std::size_t, std::int64_t tokens) {
  SharedProbeRecord& r = *shared_record;
  r.calls.fetch_add(1);
  for (std::int64_t seen = r.largest_share.load(); tokens > seen && !r.largest_share.compare_exchange_weak(seen, tokens);) {
  }
  const pid_t me = gettid();
  for (auto& slot : r.thread_ids) {
    pid_t empty = 0;
    if (slot.load() == me) return;
    if (slot.compare_exchange_strong(empty, me)) {
      r.threads_seen.fetch_add(1);
      return;
    }
    if (empty == me) return;
  }
}

TEST(ProbeTeam, APluginAtTwoThreadsIsProbedAtTwoThreads) {
  void* memory = mmap(nullptr, sizeof(SharedProbeRecord), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(memory, MAP_FAILED);
  shared_record = new (memory) SharedProbeRecord{};
  PluginOptions options;
  options.threads = 2;
  const auto plugin = load_plugin(test::built_plugin("scaled_rope"), options);  // ABI 2: call->threads
  const PluginTimer* timer = plugin_timer(*plugin);
  ASSERT_NE(timer, nullptr);
  constexpr std::int64_t kTokens = 8, kHeads = 2, kHeadDim = 16;
  std::vector<float> q(kTokens * kHeads * kHeadDim, 0.5f), k = q;
  std::vector<std::int64_t> positions(kTokens);
  for (std::int64_t t = 0; t < kTokens; ++t) positions[static_cast<std::size_t>(t)] = t;
  RopeSpec spec;
  spec.head_dim = spec.rotary_dim = kHeadDim;
  timer->stage(spec, StorageType::fp32, std::as_bytes(std::span(q)), kHeads, std::as_bytes(std::span(k)), kHeads,
               positions);
  for (const int threads : {1, 2}) {
    shared_record->calls = 0;
    shared_record->largest_share = 0;
    shared_record->threads_seen = 0;
    for (auto& slot : shared_record->thread_ids) slot = 0;
    const WorkerTimedCall t = timer->timed_call(recording_probe_in_worker, threads);
    EXPECT_GT(t.probe_passes, 0);
    EXPECT_EQ(shared_record->threads_seen.load(), threads) << "a call at " << threads << " threads";
    EXPECT_EQ(shared_record->largest_share.load(), kTokens / threads) << "a call at " << threads << " threads";
    EXPECT_EQ(shared_record->calls.load(), threads * t.probe_passes);
  }
  munmap(memory, sizeof(SharedProbeRecord));
}

}  // namespace
}  // namespace ropecheck
