// The call-form peers' cases (qk_norm_rope_peer_cases.h).
#include "bench/qk_norm_rope_peer_cases.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <exception>

#include "bench/format/case_name.h"
#include "bench/same_run_limit.h"

namespace ropecheck::bench {
namespace {

constexpr StorageType kPeerStorage = StorageType::bf16;

void bench_form_peer(benchmark::State& state, QkNormRopePeerCase* c) {
  QkNormRopeWorkload& w = *c->workload;
  w.allocate();
  const RopeFormCall call = qk_norm_rope_peer_call(*c->peer, w);
  const double bytes = qk_norm_rope_bytes(w).fused();
  const auto step = [&] {
    c->peer->apply(call);
    benchmark::ClobberMemory();
  };
  try {
    // The wall clock: the call's work runs in the peer's worker process, not on this thread.
    run_with_limit<WallClock>(state, step, qk_norm_rope_probe(w), bytes);
  } catch (const std::exception& e) {  // a peer that fails while timed: this case's error, not the run's
    state.SkipWithError(e.what());
    return;
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
}

}  // namespace

RopeFormCall qk_norm_rope_peer_call(const RopeFormImpl& peer, QkNormRopeWorkload& w) {
  const RopeFormCapabilities caps = peer.capabilities();
  RopeFormCall call = qk_norm_rope_call(w, caps.norm_precision);
  call.spec.angle_precision = peer.rope_capabilities().angle_precisions.front();  // as verify gives it
  if (std::ranges::find(caps.angle_sources, AngleSource::cos_sin_cache) == caps.angle_sources.end()) {
    call.angles = AngleSource::spec;  // HF's forms compute their own
    call.cos_sin_cache = {};
    call.cache_rows = 0;
  }
  if (std::ranges::find(caps.norm_weights, NormWeight::plain) == caps.norm_weights.end()) {
    call.has_norm = false;  // vLLM's rotary embedding: the norm is a layer of its own
  }
  return call;
}

std::vector<Comparison> register_qk_norm_rope_peer_cases(QkNormRopePeerCases& owner,
                                                         std::span<const RopeFormImpl* const> peers, LeftOut& left_out) {
  std::vector<Comparison> table;
  if (peers.empty()) return table;
  QkNormRopeWorkload& w = owner.workloads.emplace_back(kQkNormRopeShapes[0], kPeerStorage);
  for (const RopeFormImpl* peer : peers) {
    const RopeFormCapabilities caps = peer->capabilities();
    // What the call needs of it, asked without allocating the workload (its buffer is not read).
    RopeFormCall probe_call = qk_norm_rope_peer_call(*peer, w);
    std::string why = caps.why_unsupported(probe_call);
    if (why.empty()) why = peer->rope_capabilities().why_unsupported(probe_call.spec);
    if (!why.empty()) {
      left_out.add(std::string(peer->id()), why);
      continue;
    }
    const QkNormRopeCaseName name{std::string(peer->id()), std::string(w.shape.name),
                                  probe_call.angles == AngleSource::cos_sin_cache ? "cache" : "spec",
                                  std::string(to_string(kPeerStorage))};
    const std::string registered = registered_name(name);
    benchmark::RegisterBenchmark(registered.c_str(), bench_form_peer, &owner.cases.emplace_back(peer, &w))->UseRealTime();
    table.push_back({registered, "", 0});
  }
  return table;
}

}  // namespace ropecheck::bench
