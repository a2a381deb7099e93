// Stable row softmax with AVX2 (softmax.h): 8 lanes, SLEEF expf8, the tail through vmaskmov
// (slow as a store on AMD cores, so only for the last partial vector). No C++ library headers: this
// file's flags must not leak into inline code shared with other files.
#include <immintrin.h>
#include <sleef.h>

#include "impls/kernels/softmax.h"

namespace ropecheck::kernels {
namespace {

// Lanes [0, remaining) set.
__m256i tail_lanes(std::int64_t remaining) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(remaining < 8 ? remaining : 8)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

float horizontal_max(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  return _mm_cvtss_f32(_mm_max_ss(m, _mm_movehdup_ps(m)));
}

float horizontal_sum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

// The row's max: four running maxima over the whole vectors (one vmaxps chain waits its latency,
// 4 cycles, every 8 scores: this pass took about half of the softmax's own time at 2048 tokens),
// the tail through `tail`; exact in any order.
float max_of(const float* x, std::int64_t n, std::int64_t whole, __m256i tail) {
  const __m256 minus_inf = _mm256_set1_ps(-__builtin_inff());
  __m256 max = minus_inf, max1 = minus_inf, max2 = minus_inf, max3 = minus_inf;
  std::int64_t j = 0;
  for (; j + 32 <= whole; j += 32) {
    max = _mm256_max_ps(max, _mm256_loadu_ps(x + j));
    max1 = _mm256_max_ps(max1, _mm256_loadu_ps(x + j + 8));
    max2 = _mm256_max_ps(max2, _mm256_loadu_ps(x + j + 16));
    max3 = _mm256_max_ps(max3, _mm256_loadu_ps(x + j + 24));
  }
  for (; j < whole; j += 8) max = _mm256_max_ps(max, _mm256_loadu_ps(x + j));
  if (whole < n) {  // masked-off lanes read as 0: put -inf there instead
    const __m256 last = _mm256_blendv_ps(minus_inf, _mm256_maskload_ps(x + whole, tail), _mm256_castsi256_ps(tail));
    max = _mm256_max_ps(max, last);
  }
  return horizontal_max(_mm256_max_ps(_mm256_max_ps(max, max1), _mm256_max_ps(max2, max3)));
}

}  // namespace

void softmax_row_avx2(float* x, std::int64_t n) {
  const std::int64_t whole = n / 8 * 8;
  const __m256i tail = tail_lanes(n - whole);
  const float row_max = max_of(x, n, whole, tail);
  if (row_max == -__builtin_inff()) {  // every score masked: defined as no attention at all
    for (std::int64_t j = 0; j < whole; j += 8) _mm256_storeu_ps(x + j, _mm256_setzero_ps());
    if (whole < n) _mm256_maskstore_ps(x + whole, tail, _mm256_setzero_ps());
    return;
  }
  const __m256 shift = _mm256_set1_ps(row_max);
  __m256 sum = _mm256_setzero_ps();
  for (std::int64_t j = 0; j < whole; j += 8) {
    const __m256 e = Sleef_expf8_u10avx2(_mm256_sub_ps(_mm256_loadu_ps(x + j), shift));
    sum = _mm256_add_ps(sum, e);
    _mm256_storeu_ps(x + j, e);
  }
  if (whole < n) {
    const __m256 e = _mm256_and_ps(Sleef_expf8_u10avx2(_mm256_sub_ps(_mm256_maskload_ps(x + whole, tail), shift)),
                                   _mm256_castsi256_ps(tail));  // lanes past n add nothing
    sum = _mm256_add_ps(sum, e);
    _mm256_maskstore_ps(x + whole, tail, e);
  }
  const __m256 inverse = _mm256_set1_ps(1.0f / horizontal_sum(sum));  // sum >= 1: the max's own term
  for (std::int64_t j = 0; j < whole; j += 8) _mm256_storeu_ps(x + j, _mm256_mul_ps(_mm256_loadu_ps(x + j), inverse));
  if (whole < n) _mm256_maskstore_ps(x + whole, tail, _mm256_mul_ps(_mm256_maskload_ps(x + whole, tail), inverse));
}

}  // namespace ropecheck::kernels
