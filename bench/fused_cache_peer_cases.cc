// The fused RoPE + KV-cache peers' cases (fused_cache_peer_cases.h).
#include "bench/fused_cache_peer_cases.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <exception>

#include "bench/format/case_name.h"
#include "bench/probes.h"
#include "bench/same_run_limit.h"

namespace ropecheck::bench {
namespace {

constexpr CacheStorage kStorage = CacheStorage::bf16;

// The own cases' cache (fused_cache_cases.cc: block 16, one block per 16 tokens, NHD) under the
// peer's own padding rule (every slot is valid here, so the rule changes nothing but the check).
KvCacheSpec peer_cache(const FusedCacheShape& s, const RopeCacheImpl& peer) {
  KvCacheSpec c;
  c.layout = CacheLayout::nhd;
  c.storage = kStorage;
  c.block_size = 16;
  c.blocks = (s.tokens + c.block_size - 1) / c.block_size;
  c.kv_heads = s.kv_heads;
  c.head_dim = s.head_dim;
  c.padding = peer.capabilities().padding;
  return c;
}

void bench_peer(benchmark::State& state, FusedCachePeerCase* c) {
  FusedCacheWorkload& w = *c->workload;
  w.allocate();
  const FusedCacheShape& s = w.shape;
  RopeCacheCall call;
  call.spec.head_dim = static_cast<int>(s.head_dim);
  call.spec.rotary_dim = static_cast<int>(s.head_dim);
  call.spec.layout = Layout::interleaved;  // as the own cases: vLLM's is_neox_style=False
  // The peer's own angle formation (the torch references: fp32), as verify gives it.
  call.spec.angle_precision = c->peer->rope_capabilities().angle_precisions.front();
  call.cache = peer_cache(s, *c->peer);
  call.q = w.q;
  call.q_heads = s.q_heads;
  call.k = w.k;
  call.v = w.v;
  call.tokens = s.tokens;
  call.positions = w.positions;
  call.slots = w.slots;
  const auto cache_bytes = static_cast<std::size_t>(cache_elements(call.cache) * element_bytes(kStorage));
  call.k_cache = std::span(w.k_cache).first(cache_bytes);
  call.v_cache = std::span(w.v_cache).first(cache_bytes);
  // The own cases' bytes and probe walk (fused_cache_cases.cc): q read and written, k and v read,
  // the cache rows written, in groups of at least 16 KiB of q.
  const auto q_token = static_cast<std::size_t>(s.q_heads * s.head_dim);
  const auto kv_token = static_cast<std::size_t>(s.kv_heads * s.head_dim);
  const std::size_t row_bytes = kv_token * element_bytes(kStorage);
  const auto tokens = static_cast<std::size_t>(s.tokens);
  const double bytes = static_cast<double>(tokens) *
                       (2.0 * 4 * static_cast<double>(q_token) + 2.0 * 4 * static_cast<double>(kv_token) +
                        2.0 * static_cast<double>(row_bytes));
  const std::size_t group = std::max<std::size_t>(1, 16384 / (q_token * sizeof(float)));
  float sink = 0;
  const auto probe = [&] {
    for (std::size_t t = 0; t < tokens; t += group) {
      const std::size_t n = std::min(group, tokens - t);
      inplace_scale(std::span(w.q).subspan(t * q_token, n * q_token), -1.0f);
      sink += stream_read(std::span<const float>(w.k).subspan(t * kv_token, n * kv_token));
      sink += stream_read(std::span<const float>(w.v).subspan(t * kv_token, n * kv_token));
      stream_fill(call.k_cache.subspan(t * row_bytes, n * row_bytes), std::byte{0x11});
      stream_fill(call.v_cache.subspan(t * row_bytes, n * row_bytes), std::byte{0x11});
    }
    benchmark::DoNotOptimize(sink);
    benchmark::ClobberMemory();
  };
  const auto step = [&] {
    c->peer->apply(call);
    benchmark::ClobberMemory();
  };
  try {
    // The wall clock: the call's work runs in the peer's worker process, not on this thread.
    run_with_limit<WallClock>(state, step, probe, bytes);
  } catch (const std::exception& e) {  // a peer that fails while timed: this case's error, not the run's
    state.SkipWithError(e.what());
    return;
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
}

}  // namespace

std::vector<Comparison> register_fused_cache_peer_cases(FusedCachePeerCases& owner,
                                                        std::span<const RopeCacheImpl* const> peers, LeftOut& left_out) {
  std::vector<Comparison> table;
  const auto shape = std::find_if(std::begin(kFusedCacheShapes), std::end(kFusedCacheShapes),
                                  [](const FusedCacheShape& s) { return s.name == kFusedCachePeerShape; });
  if (peers.empty() || shape == std::end(kFusedCacheShapes)) return table;
  FusedCacheWorkload& w = owner.workloads.emplace_back(*shape);
  for (const RopeCacheImpl* peer : peers) {
    if (const std::string why = peer->capabilities().why_unsupported(peer_cache(*shape, *peer)); !why.empty()) {
      left_out.add(std::string(peer->id()), why);
      continue;
    }
    const FusedCacheCaseName name{std::string(peer->id()), std::string(shape->name), "nhd",
                                  std::string(to_string(kStorage))};
    const std::string registered = registered_name(name);
    benchmark::RegisterBenchmark(registered.c_str(), bench_peer, &owner.cases.emplace_back(peer, &w))->UseRealTime();
    table.push_back({registered, "", 0});
  }
  return table;
}

}  // namespace ropecheck::bench
