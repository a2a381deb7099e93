// Attention benchmark cases: causal attention_blas on the problems of shapes.h at each thread
// count (`blas_threads`, the name kept for the history: attention's team, each member's sgemms on
// one OpenBLAS thread; attention.h), and the attention peers (attention plugins: llama.cpp's
// ggml_flash_attn_ext) on the head_dim 128 problems at the same thread counts (their own threads),
// checked against attention_naive first, each with its same-run sgemm probe (same_run_limit.h):
// the T x T x d product attention is built from, shared by a team of the same size.
// Napkin math: causal attention does S = Q K^T and O = P V on the lower triangle only:
// 2 products * 2 d * T (T + 1) / 2 flops a head (T = 2048, d = 128, 8 heads: 8.6 GFLOP); the
// probe, a full T x T x d sgemm a head: 8 * 2 T^2 d flops (8.6 GFLOP). GFLOP = 1e9 flops.
// GQA changes neither: every q head still attends over all its tokens.
#pragma once

#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "bench/aligned_buffer.h"
#include "bench/format/case_name.h"
#include "bench/ratio_table.h"
#include "bench/format/shapes.h"
#include "impls/attention/attention_impl.h"

namespace ropecheck::bench {

struct AttentionCase {
  AttentionCase(AttentionProblem p, int threads, AttentionRope r, const AttentionImpl* peer_impl = nullptr,
                bool time_when_failing = false)
      : problem(p), blas_threads(threads), rope(r), peer(peer_impl), time_failing(time_when_failing) {}
  const AttentionProblem problem;
  const int blas_threads;  // the team's size, attention's and the probe's (a peer's own threads)
  const AttentionRope rope;
  const AttentionImpl* peer;  // an attention plugin timed in place of attention_blas (rope none)
  const bool time_failing;    // a peer that fails its check is still timed, marked oracle_failed
  std::once_flag prepared;  // Google Benchmark calls a case many times: check and fill once
  std::string error;
  // Page-aligned, as the RoPE cases' q and k: placed alike in every process, and wrapped by a
  // peer (ggml wraps 32-byte aligned memory only) without a copy.
  AlignedVector<float> q, k, v, out, probe_a, probe_b, probe_c;
  std::vector<std::int64_t> positions;  // 0 .. tokens - 1, for the RoPE forms
};

// Registers attention_blas at each thread count, and for the problems marked with_rope
// the same with RoPE, a separate pass and fused (AttentionRope); then each peer (an attention
// plugin, `time_failing`: timed even where it fails its check) on the peer problems. Returns the
// ratio-table rows: each RoPE form against attention alone, each peer against attention_blas.
std::vector<Comparison> register_attention_cases(std::deque<AttentionCase>& owner, std::span<const int> threads,
                                                 std::span<const AttentionImpl* const> peers = {},
                                                 bool time_failing = false);

}  // namespace ropecheck::bench
