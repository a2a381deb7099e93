// Attention benchmark cases: causal attention_blas on the problems of shapes.h at each thread
// count (`blas_threads`, the name kept for the history: attention's team, each member's sgemms on
// one OpenBLAS thread; attention.h), checked against attention_naive first, each with its
// same-run sgemm probe (same_run_limit.h): the T x T x d product attention is built from, shared
// by a team of the same size.
// Napkin math: causal attention does S = Q K^T and O = P V on the lower triangle only:
// 2 products * 2 d * T (T + 1) / 2 flops a head (T = 2048, d = 128, 8 heads: 8.6 GFLOP); the
// probe, a full T x T x d sgemm a head: 8 * 2 T^2 d flops (8.6 GFLOP). GFLOP = 1e9 flops.
#pragma once

#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "bench/format/case_name.h"
#include "bench/ratio_table.h"
#include "bench/format/shapes.h"

namespace ropecheck::bench {

struct AttentionCase {
  AttentionCase(AttentionProblem p, int threads, AttentionRope r)
      : problem(p), blas_threads(threads), rope(r) {}
  const AttentionProblem problem;
  const int blas_threads;  // the team's size, attention's and the probe's
  const AttentionRope rope;
  std::once_flag prepared;  // Google Benchmark calls a case many times: check and fill once
  std::string error;
  std::vector<float> q, k, v, out, probe_a, probe_b, probe_c;
  std::vector<std::int64_t> positions;  // 0 .. tokens - 1, for the RoPE forms
};

// Registers attention_blas at each thread count, and for the problems marked with_rope
// the same with RoPE, a separate pass and fused (AttentionRope); returns the ratio-table rows
// (each RoPE form against attention alone).
std::vector<Comparison> register_attention_cases(std::deque<AttentionCase>& owner,
                                                 std::span<const int> threads);

}  // namespace ropecheck::bench
