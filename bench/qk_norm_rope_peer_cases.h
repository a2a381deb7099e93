// The call-form peers (ABI 6 plugins' form entries and Python call forms: `ropecheck bench
// --plugin`, and the main job's built peers) at the own fused QK-norm + RoPE kernels' shape
// (qk_norm_rope_cases.h): Qwen3-8B's packed qkv in bf16, 8192 tokens. Each peer makes the call it
// declares on the same bytes: a cos/sin cache where it takes one (else the spec's angles), the
// norm with Qwen3's plain weights where it has one (at its own precision; else the rotation alone),
// against the same-run probe of the own cases, interleaved in the same slices (same_run_limit.h).
// A peer runs in its worker process, so its call is timed on the wall clock through the process
// boundary (the buffer copied to the worker and back): what a caller of the peer gets through
// ropecheck's plugin host, a lower bound on what the peer's own code does.
#pragma once

#include <deque>
#include <span>
#include <vector>

#include "bench/left_out.h"
#include "bench/qk_norm_rope_cases.h"
#include "bench/ratio_table.h"
#include "impls/fused/rope_form_impl.h"

namespace ropecheck::bench {

struct QkNormRopePeerCase {
  const RopeFormImpl* peer;
  QkNormRopeWorkload* workload;
};

struct QkNormRopePeerCases {
  std::deque<QkNormRopeWorkload> workloads;
  std::deque<QkNormRopePeerCase> cases;
};

// The call a peer is timed with on `w` (what it declares, as above).
RopeFormCall qk_norm_rope_peer_call(const RopeFormImpl& peer, QkNormRopeWorkload& w);

// Registers each peer that takes a strided bf16 call (the others into `left_out`, with why).
// Returns the ratio-table rows: each case against its probe.
std::vector<Comparison> register_qk_norm_rope_peer_cases(QkNormRopePeerCases& owner,
                                                         std::span<const RopeFormImpl* const> peers, LeftOut& left_out);

}  // namespace ropecheck::bench
