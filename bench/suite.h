// The benchmark suite of `ropecheck bench`: every RoPE implementation of the registry (and any
// plugin) on the shapes of shapes.h, the kernels' ceilings (the 16-bit levels' conversions alone,
// every SIMD level's rotation alone), the fused RoPE + KV-cache kernels (beside their two passes), the sinusoidal tables, and attention, each verified before
// it is timed and each with its same-run limit (same_run_limit.h). The suite only registers cases with Google Benchmark;
// bench/run_bench.cc runs them.
#pragma once

#include <deque>
#include <span>
#include <vector>

#include "bench/attention_cases.h"
#include "bench/conversion_cases.h"
#include "bench/fused_cache_cases.h"
#include "bench/fused_cache_peer_cases.h"
#include "bench/left_out.h"
#include "bench/qk_norm_rope_cases.h"
#include "bench/qk_norm_rope_peer_cases.h"
#include "bench/ratio_table.h"
#include "bench/rope_cases.h"
#include "bench/rotation_cases.h"
#include "bench/table_cases.h"

namespace ropecheck::bench {

// What the registered benchmarks point to: it must outlive the run.
struct Suite {
  RopeCases rope;
  std::deque<AttentionCase> attention;
  std::deque<TableCase> tables;
  std::deque<ConversionCase> conversions;
  std::deque<RotationCase> rotations;
  FusedCacheCases fused_caches;
  FusedCachePeerCases fused_cache_peers;
  QkNormRopeCases qk_norm_ropes;
  QkNormRopePeerCases qk_norm_rope_peers;
  LeftOut left_out;  // what this CPU does not run, said once (left_out.h)
};

// Registers every case (rope_impls: the implementations to time, e.g. the registry's real ones
// plus plugins; attention_peers: attention plugins timed beside attention_blas, time_failing:
// even where they fail their check; threads: benchmark thread counts for the kernels and
// attention's team sizes; rope_cache_peers: the fused RoPE + KV-cache peers, timed beside the own
// fused kernels; rope_form_peers: the call-form peers, beside the own fused QK-norm + RoPE kernels).
// Returns the ratio-table rows.
std::vector<Comparison> register_suite(Suite& suite, std::span<const RopeImpl* const> rope_impls,
                                       std::span<const int> threads,
                                       std::span<const AttentionImpl* const> attention_peers = {},
                                       std::span<const RopeCacheImpl* const> rope_cache_peers = {},
                                       std::span<const RopeFormImpl* const> rope_form_peers = {});

}  // namespace ropecheck::bench
