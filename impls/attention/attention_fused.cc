// attention_blas_rope_fused (see attention.h): RoPE applied to q and k as they are packed for
// sgemm, instead of a pass over the whole of q and k before attention.
#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/isa.h"
#include "impls/attention/attention.h"
#include "impls/registry.h"

namespace ropecheck {

PositionIds block_positions(PositionIds positions, std::int64_t i0, std::int64_t rows) {
  return positions.subspan(static_cast<std::size_t>(i0), static_cast<std::size_t>(rows));
}

namespace {

// Rows `rows` of one head of x ([tokens][heads][d]) from `first`, packed contiguous into `to`.
void pack_rows(const float* x, std::int64_t heads, std::int64_t head, int d, std::int64_t first,
               std::int64_t rows, float* to) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = x + ((first + r) * heads + head) * d;
    std::copy(row, row + d, to + r * d);
  }
}

}  // namespace

void attention_blas_rope_fused(const AttentionShape& s, const RopeSpec& spec,
                               PositionIds positions, std::span<const float> q,
                               std::span<const float> k, std::span<const float> v,
                               std::span<float> out, std::int64_t block_rows, Isa softmax,
                               QueryPositions query_positions) {
  validate(s, q, k, v, out);
  if (block_rows <= 0) throw InvalidInput(fmt::format("attention: block_rows {} <= 0", block_rows));
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
  const auto ldkv = static_cast<int>(s.kv_heads * d), ldo = static_cast<int>(s.q_heads * d);
  const std::int64_t block = std::min(block_rows, s.tokens);
  std::vector<float> keys(static_cast<std::size_t>(s.tokens * d));
  std::vector<float> queries(static_cast<std::size_t>(block * d));
  std::vector<float> scores(static_cast<std::size_t>(block * s.tokens));
  for (std::int64_t g = 0; g < s.kv_heads; ++g) {
    // This kv head's keys, packed and rotated once for every q head of its group.
    pack_rows(k.data(), s.kv_heads, g, d, 0, s.tokens, keys.data());
    kernel.apply(spec, HeadTensor{keys, s.tokens, 1, d}, positions);
    const float* vh = v.data() + g * d;
    for (std::int64_t h = g * group; h < (g + 1) * group; ++h) {
      for (std::int64_t i0 = 0; i0 < s.tokens; i0 += block_rows) {
        const std::int64_t rows = std::min(block_rows, s.tokens - i0);
        const std::int64_t cols = s.causal ? i0 + rows : s.tokens;
        const std::span<float> packed(queries.data(), static_cast<std::size_t>(rows * d));
        pack_rows(q.data(), s.q_heads, h, d, i0, rows, packed.data());
        kernel.apply(spec, HeadTensor{packed, rows, 1, d}, query_positions(positions, i0, rows));
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(rows),
                    static_cast<int>(cols), d, scale, packed.data(), d, keys.data(), d, 0.0f,
                    scores.data(), static_cast<int>(cols));
        for (std::int64_t r = 0; r < rows; ++r) {
          float* row = scores.data() + r * cols;
          const std::int64_t visible = s.causal ? i0 + r + 1 : cols;
          softmax_row(row, visible, softmax);
          std::fill(row + visible, row + cols, 0.0f);  // masked keys get no weight
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows), d,
                    static_cast<int>(cols), 1.0f, scores.data(), static_cast<int>(cols), vh, ldkv,
                    0.0f, out.data() + (i0 * s.q_heads + h) * d, ldo);
      }
    }
  }
}

}  // namespace ropecheck
