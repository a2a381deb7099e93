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

}  // namespace

void softmax_row_avx512(float* x, std::int64_t n) {
  __m512 max = _mm512_set1_ps(-__builtin_inff());
  for (std::int64_t j = 0; j < n; j += 16) {
    max = _mm512_mask_max_ps(max, tail_mask(n - j), max, _mm512_maskz_loadu_ps(tail_mask(n - j), x + j));
  }
  const float row_max = _mm512_reduce_max_ps(max);
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
