// Stable row softmax with AVX-512 (softmax.h): 16 lanes, masked tail, SLEEF expf16. No C++
// library headers: this file's flags must not leak into inline code shared with other files.
#include <immintrin.h>
#include <sleef.h>

#include "impls/kernels/softmax.h"

namespace ropecheck::kernels {
namespace {

__mmask16 tail_mask(std::int64_t remaining) {
  return remaining >= 16 ? static_cast<__mmask16>(0xFFFF)
                         : static_cast<__mmask16>((1u << remaining) - 1u);
}

// The row's max, four running maxima over whole vectors (one chain waits the vmaxps latency
// every 16 scores), the rest masked; exact in any order.
float max_of(const float* x, std::int64_t n) {
  const __m512 minus_inf = _mm512_set1_ps(-__builtin_inff());
  __m512 max = minus_inf, max1 = minus_inf, max2 = minus_inf, max3 = minus_inf;
  std::int64_t j = 0;
  for (; j + 64 <= n; j += 64) {
    max = _mm512_max_ps(max, _mm512_loadu_ps(x + j));
    max1 = _mm512_max_ps(max1, _mm512_loadu_ps(x + j + 16));
    max2 = _mm512_max_ps(max2, _mm512_loadu_ps(x + j + 32));
    max3 = _mm512_max_ps(max3, _mm512_loadu_ps(x + j + 48));
  }
  for (; j < n; j += 16) {
    max = _mm512_mask_max_ps(max, tail_mask(n - j), max, _mm512_maskz_loadu_ps(tail_mask(n - j), x + j));
  }
  return _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(max, max1), _mm512_max_ps(max2, max3)));
}

}  // namespace

void softmax_row_avx512(float* x, std::int64_t n) {
  const float row_max = max_of(x, n);
  if (row_max == -__builtin_inff()) {
    for (std::int64_t j = 0; j < n; j += 16) _mm512_mask_storeu_ps(x + j, tail_mask(n - j), _mm512_setzero_ps());
    return;
  }
  const __m512 shift = _mm512_set1_ps(row_max);
  __m512 sum = _mm512_setzero_ps();
  for (std::int64_t j = 0; j < n; j += 16) {
    const __mmask16 lanes = tail_mask(n - j);
    const __m512 e = Sleef_expf16_u10avx512f(_mm512_sub_ps(_mm512_maskz_loadu_ps(lanes, x + j), shift));
    sum = _mm512_mask_add_ps(sum, lanes, sum, e);
    _mm512_mask_storeu_ps(x + j, lanes, e);
  }
  const __m512 inverse = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(sum));
  for (std::int64_t j = 0; j < n; j += 16) {
    const __mmask16 lanes = tail_mask(n - j);
    _mm512_mask_storeu_ps(x + j, lanes, _mm512_mul_ps(_mm512_maskz_loadu_ps(lanes, x + j), inverse));
  }
}

}  // namespace ropecheck::kernels
