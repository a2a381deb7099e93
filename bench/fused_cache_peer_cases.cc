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

void bench_peer(benchmark::State& state, FusedCachePeerCase* c) {
  FusedCacheWorkload& w = *c->workload;
  // The own cases' call, bytes and probe (fused_cache_cases.h) into the same cache under the
  // peer's own padding rule, with the peer's own angle formation (the torch references: fp32), as
  // verify gives it.
  FusedCachePass pass = fused_cache_pass(w, fused_cache_spec(w.shape, kStorage, c->peer->capabilities().padding));
  RopeCacheCall& call = pass.call;
  call.spec.angle_precision = c->peer->rope_capabilities().angle_precisions.front();
  const double bytes = pass.bytes.fused();
  const auto step = [&] {
    c->peer->apply(call);
    benchmark::ClobberMemory();
  };
  try {
    // The wall clock: the call's work runs in the peer's worker process, not on this thread.
    run_with_limit<WallClock>(state, step, pass.probe, bytes);
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
    if (const std::string why = peer->capabilities().why_unsupported(fused_cache_spec(*shape, kStorage, peer->capabilities().padding)); !why.empty()) {
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
