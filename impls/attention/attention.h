// Scaled dot-product multi-head attention (seed 003): softmax(Q K^T / sqrt(d)) V per head, on the
// RoPE data layout [tokens][heads][head_dim], with grouped-query heads (q head h reads kv head
// h / (q_heads / kv_heads)) and a causal or full mask.
//   attention_naive: the textbook loops, accumulated in double: the reference.
//   attention_blas:  per q head and block of query rows, S = Q K^T * scale by cblas_sgemm, a
//                    max-subtracted row softmax (vectorised where the CPU can), O = P V by sgemm;
//                    blocks of rows keep the score buffer at block_rows x tokens, never L x L;
//                    the (head, block) tasks shared by a team of threads, largest first.
// Softmax: masked scores are excluded, not set to -1e9 (seed 003 uses -1e9 to dodge inf/inf; the
// max subtraction already makes every exponent <= 0), so logits up to 1e30 stay finite; a row
// whose every score is masked is defined as all zeros.
#pragma once

#include <cstdint>
#include <span>

#include "core/isa.h"
#include "core/spec.h"
#include "core/tensor.h"

namespace ropecheck {

struct AttentionShape {
  std::int64_t tokens = 0;
  std::int64_t q_heads = 0;
  std::int64_t kv_heads = 0;  // divides q_heads
  int head_dim = 0;
  bool causal = true;  // query i sees keys 0..i
};

// Throws InvalidInput for empty or inconsistent shapes or buffer sizes.
void validate(const AttentionShape& shape, std::span<const float> q, std::span<const float> k,
              std::span<const float> v, std::span<const float> out);

void attention_naive(const AttentionShape& shape, std::span<const float> q,
                     std::span<const float> k, std::span<const float> v, std::span<float> out);

// The softmax's ISA level: the kernels' (core/isa.h dispatched_isa: avx512, avx2 or scalar, as the
// CPU has it and ROPECHECK_ISA allows).
Isa softmax_isa();

// How attention_blas and its fused form cut and share the work. Each thread of the team runs its
// sgemms on one OpenBLAS thread (OpenBLAS held there for the call): OpenBLAS's own split of a
// block's sgemms (128 to 256 rows) does not scale; on Zen 4, 2 BLAS threads ran as fast as 1
// (0.46 of the 2-thread sgemm), the tasks shared by 2 threads 0.85. The result does not depend on
// `threads`: every task is computed alone, the same way.
struct AttentionWork {
  // Query rows a task: > 0, or 0 (the default) for block_rows_for(tokens).
  std::int64_t block_rows = 0;
  // Causal: the height of the strips a block's diagonal square is formed in (each strip's scores
  // end at its last row's key): > 0, or 0 (the default) for kDiagonalStripRows.
  std::int64_t strip_rows = 0;
  Isa softmax = softmax_isa();
  int threads = 1;  // the team, 1 to kMaxAttentionThreads
};
inline constexpr int kMaxAttentionThreads = 1024;

// A causal block of R rows forms the keys before it as one product, then its diagonal R x R
// square in strips of this many rows, each strip's scores ending at its last row's key: the
// masked half of the square costs h / 2 keys a row instead of R / 2 (a waste of h / tokens of the
// causal work, against R / tokens formed whole: 3% against 12.5% at 2048 tokens, R = 256).
// Each strip is one more pair of small sgemms, packing its rows and the square's keys again.
inline constexpr std::int64_t kDiagonalStripRows = 64;

// The block height attention_blas and its fused form take when AttentionWork leaves it to the
// length (0): sqrt(32 tokens) rounded down to a multiple of 64, within [128, 256]. Each block's
// sgemms pack again every key and value row they read (a cost per block proportional to the
// keys, so 1/R of the work for blocks of R rows), while a causal block formed its diagonal
// square whole (a waste of about R / tokens of the work): the sum is least at R = sqrt(a tokens).
// On Zen 4 with OpenBLAS 0.3.21, 1 thread, 8 heads of 128, against the sgemm probe (4 processes
// each, bench/README.md): 128 rows were best at 512 tokens, 128-192 at 1024, 256 at 2048 and
// 4096, a = 32. The diagonal strips (above) took most of that waste away; on a Xeon at the AVX2
// level, 384 and 512 rows were then no faster than 256 at 2048 and 4096 tokens (within the noise
// of 2 processes each), while the scores (R x tokens floats a thread) grow with R out of cache.
// At most 256: the fused form's rotated query block, R x heads x head_dim floats, is already
// 1 MiB there for 8 heads of 128.
std::int64_t block_rows_for(std::int64_t tokens);

void attention_blas(const AttentionShape& shape, std::span<const float> q,
                    std::span<const float> k, std::span<const float> v, std::span<float> out,
                    const AttentionWork& work = {});

// Which positions the packed query rows [i0, i0 + rows) are rotated by: block_positions, the
// right ones, positions[i0 .. i0 + rows); a mutant's hook takes others.
using QueryPositions = PositionIds (*)(PositionIds positions, std::int64_t i0, std::int64_t rows);
PositionIds block_positions(PositionIds positions, std::int64_t i0, std::int64_t rows);

// attention_blas with RoPE fused into attention's blocking, by the dispatched fast kernel
// (kernel/<level>): k is rotated once into a copy (every block of query rows reads all of it);
// each block of query rows, all heads at once (a task), is copied and rotated in cache just
// before its sgemms, never written back to memory. q and k themselves are only read. The kernel forms each
// token's cos/sin table once for all its heads, as in a separate pass. spec.head_dim must be
// shape.head_dim; one position per token. Throws InvalidInput.
void attention_blas_rope_fused(const AttentionShape& shape, const RopeSpec& spec,
                               PositionIds positions, std::span<const float> q,
                               std::span<const float> k, std::span<const float> v,
                               std::span<float> out, const AttentionWork& work = {},
                               QueryPositions query_positions = block_positions);

// In place over n scores: p_j = exp(x_j - max) / sum; all zeros when every x_j is -inf. At the
// given level (scalar or avx512; the CPU must have it).
void softmax_row(float* x, std::int64_t n, Isa level = softmax_isa());

}  // namespace ropecheck
