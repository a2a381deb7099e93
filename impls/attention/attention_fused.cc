// attention_blas_rope_fused (see attention.h): RoPE applied inside attention's blocking: q block by
// block in cache as it is copied for sgemm, k once into a copy; q and k themselves only read.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>

#include "core/errors.h"
#include "core/isa.h"
#include "core/thread_team.h"
#include "impls/attention/attention.h"
#include "impls/attention/attention_block.h"
#include "impls/attention/kept_scratch.h"
#include "impls/attention/one_blas_thread.h"
#include "impls/registry.h"
#include "impls/rope_impl.h"

namespace ropecheck {

PositionIds block_positions(PositionIds positions, std::int64_t i0, std::int64_t rows) {
  return positions.subspan(static_cast<std::size_t>(i0), static_cast<std::size_t>(rows));
}

void attention_blas_rope_fused(const AttentionShape& s, const RopeSpec& spec,
                               PositionIds positions, std::span<const float> q,
                               std::span<const float> k, std::span<const float> v,
                               std::span<float> out, const AttentionWork& work,
                               QueryPositions query_positions) {
  validate(s, q, k, v, out);
  validate(work);
  if (spec.head_dim != s.head_dim) {
    throw InvalidInput(fmt::format("attention: RoPE head_dim {} != attention head_dim {}",
                                   spec.head_dim, s.head_dim));
  }
  if (static_cast<std::int64_t>(positions.size()) != s.tokens) {
    throw InvalidInput(fmt::format("attention: {} positions for {} tokens", positions.size(), s.tokens));
  }
  const RopeImpl& kernel = *find_rope("kernel/" + std::string(to_string(dispatched_isa())));
  const int d = s.head_dim;
  const auto group = s.q_heads / s.kv_heads;
  const auto scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  const auto ldq = static_cast<int>(s.q_heads * d), ldkv = static_cast<int>(s.kv_heads * d);
  // The keys, rotated into a copy once: every block of query rows reads all of them. The
  // kernel forms each token's cos/sin table once for all its kv heads. The team shares the
  // tokens: alone, the caller's copy and rotation of k came before every member's first block
  // (2048 tokens, 2 threads, AVX2: attention_fused at 0.73-0.75 of the sgemm probe).
  const std::span<float> keys = kept_scratch(ScratchUse::keys, k.size());
  const auto token_floats = static_cast<std::size_t>(s.kv_heads * d);
  run_team(work.threads, [&](int member) {
    const TokenChunk c = token_chunk(s.tokens, work.threads, member);  // the kernels' own split
    if (c.begin == c.end) return;
    const auto at = static_cast<std::size_t>(c.begin) * token_floats;
    const auto count = static_cast<std::size_t>(c.end - c.begin);
    const auto share = keys.subspan(at, count * token_floats);
    const auto from = k.subspan(at, share.size());
    std::copy(from.begin(), from.end(), share.begin());
    kernel.apply(spec, HeadTensor{share, c.end - c.begin, s.kv_heads, d},
                 positions.subspan(static_cast<std::size_t>(c.begin), count));
  });
  const std::int64_t block_rows = block_height(work, s.tokens);
  const std::int64_t blocks = (s.tokens + block_rows - 1) / block_rows;
  std::atomic<std::int64_t> next_task{0};  // task t: one block, every head
  const OneBlasThread one_blas_thread(work.threads > 1);
  const auto queries_each = static_cast<std::size_t>(block_rows * s.q_heads * d);
  const auto scores_each = static_cast<std::size_t>(block_rows * s.tokens);
  // One buffer of each per thread of the team (members past the CPUs take turns on a thread).
  const int workers = team_threads(work.threads);
  const auto slots = static_cast<std::size_t>(workers);
  const std::span<float> queries_all = kept_scratch(ScratchUse::queries, queries_each * slots);
  const std::span<float> scores_all = kept_scratch(ScratchUse::scores, scores_each * slots);
  run_team(work.threads, [&](int member) {
    const auto slot = static_cast<std::size_t>(member % workers);
    float* queries = queries_all.data() + slot * queries_each;
    float* scores = scores_all.data() + slot * scores_each;
    for (std::int64_t task; (task = next_task.fetch_add(1, std::memory_order_relaxed)) < blocks;) {
      const std::int64_t i0 = block_of_task(task, blocks) * block_rows;
      const std::int64_t rows = std::min(block_rows, s.tokens - i0);
      // The block's query rows of every head (contiguous in the layout), copied and rotated in
      // cache, never written back: one table per token for all its heads.
      const std::span<float> packed(queries, static_cast<std::size_t>(rows * s.q_heads * d));
      const auto first = q.subspan(static_cast<std::size_t>(i0 * s.q_heads * d), packed.size());
      std::copy(first.begin(), first.end(), packed.begin());
      kernel.apply(spec, HeadTensor{packed, rows, s.q_heads, d}, query_positions(positions, i0, rows));
      for (std::int64_t h = 0; h < s.q_heads; ++h) {
        const float* kh = keys.data() + (h / group) * d;
        const float* vh = v.data() + (h / group) * d;
        attend_block(s, {i0, rows, packed.data() + h * d, ldq, kh, vh, ldkv,
                         out.data() + (i0 * s.q_heads + h) * d, ldq},
                     strip_height(work), scale, work.softmax, scores);
      }
    }
  });
}

}  // namespace ropecheck
