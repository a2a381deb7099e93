// attention_naive (the reference, double accumulation) and attention_blas (sgemm + stable softmax
// on blocks of query rows); see impls/attention/attention.h.
#include "impls/attention/attention.h"

#include "impls/attention/attention_block.h"
#include "impls/attention/kept_scratch.h"
#include "impls/attention/one_blas_thread.h"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <vector>

#include "impls/kernels/softmax.h"
#include "core/errors.h"
#include "core/isa.h"
#include "core/thread_team.h"

namespace ropecheck {

void validate(const AttentionShape& s, std::span<const float> q, std::span<const float> k,
              std::span<const float> v, std::span<const float> out) {
  if (s.tokens <= 0 || s.q_heads <= 0 || s.kv_heads <= 0 || s.head_dim <= 0) {
    throw InvalidInput(fmt::format("attention: empty shape ({} tokens, {} q heads, {} kv heads, "
                                   "head_dim {})", s.tokens, s.q_heads, s.kv_heads, s.head_dim));
  }
  if (s.q_heads % s.kv_heads != 0) {
    throw InvalidInput(fmt::format("attention: {} q heads is not a multiple of {} kv heads",
                                   s.q_heads, s.kv_heads));
  }
  // Sizes compared in double: a product that overflows int64 is simply not equal.
  const auto need = [&](std::int64_t heads) {
    return static_cast<double>(s.tokens) * static_cast<double>(heads) * s.head_dim;
  };
  const auto check = [&](std::span<const float> x, std::int64_t heads, const char* name) {
    if (static_cast<double>(x.size()) != need(heads)) {
      throw InvalidInput(fmt::format("attention: {} holds {} floats, {} tokens x {} heads x {} need "
                                     "{}", name, x.size(), s.tokens, heads, s.head_dim, need(heads)));
    }
  };
  check(q, s.q_heads, "q");
  check(k, s.kv_heads, "k");
  check(v, s.kv_heads, "v");
  check(out, s.q_heads, "out");
}

void attention_naive(const AttentionShape& s, std::span<const float> q, std::span<const float> k,
                     std::span<const float> v, std::span<float> out) {
  validate(s, q, k, v, out);
  const auto d = static_cast<std::size_t>(s.head_dim);
  const auto group = s.q_heads / s.kv_heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(s.head_dim));
  std::vector<double> p(static_cast<std::size_t>(s.tokens));
  for (std::int64_t h = 0; h < s.q_heads; ++h) {
    const std::int64_t kvh = h / group;
    for (std::int64_t i = 0; i < s.tokens; ++i) {
      const float* qi = &q[static_cast<std::size_t>(i * s.q_heads + h) * d];
      const std::int64_t visible = s.causal ? i + 1 : s.tokens;
      double max = -std::numeric_limits<double>::infinity();
      for (std::int64_t j = 0; j < visible; ++j) {
        const float* kj = &k[static_cast<std::size_t>(j * s.kv_heads + kvh) * d];
        double dot = 0;
        for (std::size_t c = 0; c < d; ++c) dot += static_cast<double>(qi[c]) * kj[c];
        p[static_cast<std::size_t>(j)] = dot * scale;
        max = std::max(max, p[static_cast<std::size_t>(j)]);
      }
      double sum = 0;
      for (std::int64_t j = 0; j < visible; ++j) {
        p[static_cast<std::size_t>(j)] = std::exp(p[static_cast<std::size_t>(j)] - max);
        sum += p[static_cast<std::size_t>(j)];
      }
      float* oi = &out[static_cast<std::size_t>(i * s.q_heads + h) * d];
      for (std::size_t c = 0; c < d; ++c) {
        double acc = 0;
        for (std::int64_t j = 0; j < visible; ++j) {
          acc += p[static_cast<std::size_t>(j)] * v[static_cast<std::size_t>(j * s.kv_heads + kvh) * d + c];
        }
        oi[c] = static_cast<float>(acc / sum);
      }
    }
  }
}

Isa softmax_isa() {
  static const Isa level = dispatched_isa();
  return level;
}

void softmax_row(float* x, std::int64_t n, Isa level) {
  switch (level) {
#if defined(__x86_64__)
    case Isa::avx512: return kernels::softmax_row_avx512(x, n);
    case Isa::avx2: return kernels::softmax_row_avx2(x, n);
#elif defined(__aarch64__)
    case Isa::neon: return kernels::softmax_row_neon(x, n);
    case Isa::sve: return kernels::softmax_row_sve(x, n);
#endif
    default: break;  // scalar, or a level not built here
  }
  kernels::softmax_row_scalar(x, n);
}

std::int64_t block_rows_for(std::int64_t tokens) {
  const auto best = static_cast<std::int64_t>(std::sqrt(32.0 * static_cast<double>(std::max<std::int64_t>(tokens, 0))));
  return std::clamp<std::int64_t>(best / 64 * 64, 128, 256);
}

std::int64_t block_height(const AttentionWork& work, std::int64_t tokens) {
  return std::min(work.block_rows > 0 ? work.block_rows : block_rows_for(tokens), tokens);
}

void validate(const AttentionWork& work) {
  if (work.block_rows < 0) {
    throw InvalidInput(fmt::format("attention: block_rows {} < 0 (0: chosen by the length)", work.block_rows));
  }
  if (work.strip_rows < 0) {
    throw InvalidInput(fmt::format("attention: strip_rows {} < 0 (0: {})", work.strip_rows, kDiagonalStripRows));
  }
  if (work.threads < 1 || work.threads > kMaxAttentionThreads) {
    throw InvalidInput(fmt::format("attention: {} threads asked, it takes 1 to {}", work.threads,
                                   kMaxAttentionThreads));
  }
}

void attention_blas(const AttentionShape& s, std::span<const float> q, std::span<const float> k,
                    std::span<const float> v, std::span<float> out, const AttentionWork& work) {
  validate(s, q, k, v, out);
  validate(work);
  const int d = s.head_dim;
  const auto group = s.q_heads / s.kv_heads;
  const auto scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  // Rows of one head are head_dim floats, heads * head_dim apart: sgemm reads them in place.
  const auto ldq = static_cast<int>(s.q_heads * d), ldkv = static_cast<int>(s.kv_heads * d);
  const std::int64_t block_rows = block_height(work, s.tokens);
  const std::int64_t blocks = (s.tokens + block_rows - 1) / block_rows;
  std::atomic<std::int64_t> next_task{0};  // task t: every head of one block, then the next block
  const OneBlasThread one_blas_thread(work.threads > 1);
  // One scores buffer per thread of the team (members past the CPUs take turns on a thread).
  const int workers = team_threads(work.threads);
  const auto scores_each = static_cast<std::size_t>(block_rows * s.tokens);
  const std::span<float> scores_all = kept_scratch(ScratchUse::scores, scores_each * static_cast<std::size_t>(workers));
  run_team(work.threads, [&](int member) {
    float* scores = scores_all.data() + static_cast<std::size_t>(member % workers) * scores_each;
    for (std::int64_t task; (task = next_task.fetch_add(1, std::memory_order_relaxed)) < blocks * s.q_heads;) {
      const std::int64_t h = task % s.q_heads;
      const std::int64_t i0 = block_of_task(task / s.q_heads, blocks) * block_rows;
      const std::int64_t rows = std::min(block_rows, s.tokens - i0);
      const float* kh = k.data() + (h / group) * d;
      const float* vh = v.data() + (h / group) * d;
      const float* qh = q.data() + (i0 * s.q_heads + h) * d;
      attend_block(s, {i0, rows, qh, ldq, kh, vh, ldkv, out.data() + (i0 * s.q_heads + h) * d, ldq},
                   strip_height(work), scale, work.softmax, scores);
    }
  });
}

namespace {

// C = alpha A B^T (a_by_bt) or alpha A B, plus beta C; row-major, int dimensions (the callers
// keep them below 2^31: a block's rows and keys, head_dim).
void sgemm(bool a_by_bt, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
           int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, a_by_bt ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace

void attend_block(const AttentionShape& s, const AttentionBlock& b, std::int64_t strip_rows,
                  float scale, Isa softmax, float* scores) {
  // Row r of the block keeps its scores at scores + r * cols: causal, keys 0 .. i0 + rows - 1.
  const std::int64_t cols = s.causal ? b.i0 + b.rows : s.tokens;
  const auto ldc = static_cast<int>(cols);
  const int d = s.head_dim;
  // Keys every row of the block sees (causal: those before the block), as one product; a causal
  // block's diagonal square strip by strip: strip [r0, r0 + h) forms keys i0 .. i0 + r0 + h - 1.
  const std::int64_t shared = s.causal ? b.i0 : s.tokens;
  const std::int64_t strip = s.causal ? strip_rows : b.rows;
  const auto strip_end = [&](std::int64_t r0) { return std::min(r0 + strip, b.rows); };
  if (shared > 0) sgemm(true, b.rows, shared, d, scale, b.q, b.ldq, b.k, b.ldkv, 0.0f, scores, ldc);
  if (s.causal) {
    for (std::int64_t r0 = 0; r0 < b.rows; r0 += strip) {
      const std::int64_t end = strip_end(r0);
      sgemm(true, end - r0, end, d, scale, b.q + r0 * b.ldq, b.ldq, b.k + b.i0 * b.ldkv, b.ldkv,
            0.0f, scores + r0 * cols + b.i0, ldc);
    }
  }
  for (std::int64_t r = 0; r < b.rows; ++r) {
    float* row = scores + r * cols;
    const std::int64_t visible = s.causal ? b.i0 + r + 1 : cols;
    const std::int64_t formed = s.causal ? b.i0 + strip_end(r / strip * strip) : cols;
    softmax_row(row, visible, softmax);
    std::fill(row + visible, row + formed, 0.0f);  // masked keys get no weight
  }
  // O = P V over the same pieces: the shared keys' product first, each strip's added to it.
  if (shared > 0) sgemm(false, b.rows, d, shared, 1.0f, scores, ldc, b.v, b.ldkv, 0.0f, b.out, b.ldo);
  if (s.causal) {
    for (std::int64_t r0 = 0; r0 < b.rows; r0 += strip) {
      const std::int64_t end = strip_end(r0);
      sgemm(false, end - r0, d, end, 1.0f, scores + r0 * cols + b.i0, ldc, b.v + b.i0 * b.ldkv,
            b.ldkv, shared > 0 ? 1.0f : 0.0f, b.out + r0 * b.ldo, b.ldo);
    }
  }
}

}  // namespace ropecheck
