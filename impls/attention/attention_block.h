// What attention_blas and attention_blas_rope_fused share: one block of query rows of one q
// head, S = Q K^T * scale by sgemm (a causal block's diagonal square in strips, the keys after
// each strip never formed), a max-subtracted softmax per row with masked keys weighted 0,
// O = P V by sgemm into out; the checks of an AttentionWork; the order of a team's tasks.
#pragma once

#include <cstdint>

#include "core/isa.h"
#include "impls/attention/attention.h"

namespace ropecheck {

struct AttentionBlock {
  std::int64_t i0 = 0, rows = 0;  // query rows [i0, i0 + rows)
  const float* q = nullptr;       // the block's first query row of this head, rows ldq apart
  int ldq = 0;
  const float* k = nullptr;       // this head's keys (token 0), rows ldkv apart; v likewise
  const float* v = nullptr;
  int ldkv = 0;
  float* out = nullptr;           // the block's first output row of this head, rows ldo apart
  int ldo = 0;
};

// `scores` holds at least rows x (causal ? i0 + rows : tokens) floats. strip_rows > 0: the
// diagonal strips' height (causal; AttentionWork::strip_rows).
void attend_block(const AttentionShape& shape, const AttentionBlock& b, std::int64_t strip_rows,
                  float scale, Isa softmax, float* scores);

// Throws InvalidInput for block_rows or strip_rows < 0 or threads outside
// [1, kMaxAttentionThreads].
void validate(const AttentionWork& work);

// The diagonal strips' height: work.strip_rows, or kDiagonalStripRows where it is 0.
inline std::int64_t strip_height(const AttentionWork& work) {
  return work.strip_rows > 0 ? work.strip_rows : kDiagonalStripRows;
}

// The rows of a block for `tokens` query rows: work.block_rows, or block_rows_for(tokens) where it
// is 0; never more than the tokens.
std::int64_t block_height(const AttentionWork& work, std::int64_t tokens);

// The block index of the team's task `task` of `blocks`: the last (causal: the largest) first,
// so that the team's members finish together.
inline std::int64_t block_of_task(std::int64_t task, std::int64_t blocks) { return blocks - 1 - task; }

}  // namespace ropecheck
