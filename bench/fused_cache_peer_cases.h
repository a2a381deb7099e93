// The fused RoPE + paged KV-cache peers (the fused entries of ABI 5 plugins and Python fused
// functions: `ropecheck bench --plugin`, and the main job's built peers) at one shape beside the
// own fused kernels (fused_cache_cases.h): Llama 3 8B's 32 q over 8 kv heads of 128, 4096 tokens,
// an NHD bf16 cache, GPT-J-style pairs, slot t for token t. Each against the same-run probe over
// the same bytes as the own kernels' cases (q scaled in place, k and v read, cache rows stored),
// interleaved in the same slices (same_run_limit.h). A peer runs in its worker process and has no
// in-worker timer for the fused call, so its call is timed on the wall clock through the process
// boundary (q, k, v and both caches copied to the worker and back): its fraction is what a caller
// of the peer gets through ropecheck's plugin host, a lower bound on what the peer's own code does.
#pragma once

#include <deque>
#include <span>
#include <vector>

#include "bench/fused_cache_cases.h"
#include "bench/left_out.h"
#include "bench/ratio_table.h"
#include "impls/fused/rope_cache_impl.h"

namespace ropecheck::bench {

struct FusedCachePeerCase {
  const RopeCacheImpl* peer;
  FusedCacheWorkload* workload;
};

struct FusedCachePeerCases {
  std::deque<FusedCacheWorkload> workloads;
  std::deque<FusedCachePeerCase> cases;
};

// The shape the peers are timed on (one of kFusedCacheShapes, so that the report's rows match).
inline constexpr std::string_view kFusedCachePeerShape = "llama3_8b_gqa_prefill4096";

// Registers each peer that writes an NHD bf16 cache (the others into `left_out`, with why).
// Returns the ratio-table rows: each case against its probe.
std::vector<Comparison> register_fused_cache_peer_cases(FusedCachePeerCases& owner,
                                                        std::span<const RopeCacheImpl* const> peers, LeftOut& left_out);

}  // namespace ropecheck::bench
