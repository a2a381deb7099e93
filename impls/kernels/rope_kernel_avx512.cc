// The fast RoPE algorithm (rope_kernel.h) with AVX-512 intrinsics: 16 floats a vector, 8 angles
// a SLEEF call, masked loads/stores for every remainder. Compiled with -mavx512f -mavx512dq
// -mavx512vl -mavx512bw -mfma (CMake object library); only called after cpuid says so.
#include <immintrin.h>
#include <sleef.h>

#include "rope_kernel.h"

namespace ropecheck::kernels {
namespace {

__mmask16 mask16(int remaining) {
  return remaining >= 16 ? static_cast<__mmask16>(0xFFFF)
                         : static_cast<__mmask16>((1u << remaining) - 1u);
}

__mmask8 mask8(int remaining) {
  return remaining >= 8 ? static_cast<__mmask8>(0xFF) : static_cast<__mmask8>((1u << remaining) - 1u);
}

// cos/sin of m * theta_i for the token, into the table layout of rope_kernel.h.
void fill_table(const RopeKernelProblem& p, double m) {
  const int half = p.rotary_dim / 2;
  float* cos_table = p.table;
  float* sin_table = p.table + p.rotary_dim;
  const __m512d position = _mm512_set1_pd(m);
  // [0 0 1 1 ... 7 7]: each of 8 values twice, for the interleaved layout's pairs.
  const __m512i duplicate = _mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
  for (int i = 0; i < half; i += 8) {
    const __mmask8 lanes = mask8(half - i);
    const __m512d angle = _mm512_mul_pd(position, _mm512_maskz_loadu_pd(lanes, p.theta + i));
    const Sleef___m512d_2 sc = Sleef_sincosd8_u10avx512f(angle);
    const __m256 s = _mm512_cvtpd_ps(sc.x);
    const __m256 c = _mm512_cvtpd_ps(sc.y);
    if (p.interleaved) {
      const __m512 c2 = _mm512_permutexvar_ps(duplicate, _mm512_castps256_ps512(c));
      const __m512 s2 = _mm512_permutexvar_ps(duplicate, _mm512_castps256_ps512(s));
      // negate the even lanes: sin_signed = [-s0 s0 -s1 s1 ...]
      const __m512 s2_signed = _mm512_mask_sub_ps(s2, 0x5555, _mm512_setzero_ps(), s2);
      const __mmask16 pair_lanes = mask16(2 * (half - i));
      _mm512_mask_storeu_ps(cos_table + 2 * i, pair_lanes, c2);
      _mm512_mask_storeu_ps(sin_table + 2 * i, pair_lanes, s2_signed);
    } else {
      _mm256_mask_storeu_ps(cos_table + i, lanes, c);
      _mm256_mask_storeu_ps(sin_table + i, lanes, s);
    }
  }
}

// One vector of interleaved pairs: y = x * cos_dup + swap_pairs(x) * sin_signed.
inline __m512 rotate_pairs(__m512 v, __m512 c, __m512 s) {
  const __m512 swapped = _mm512_permute_ps(v, 0xB1);  // (x0 x1 x2 x3) -> (x1 x0 x3 x2)
  return _mm512_fmadd_ps(swapped, s, _mm512_mul_ps(v, c));
}

void rotate_interleaved(const RopeKernelProblem& p, float* x) {
  const float* c = p.table;
  const float* s = p.table + p.rotary_dim;
  int j = 0;
  // Full vectors with plain loads and stores: masked stores are slow on some cores (Zen 4).
  for (; j + 16 <= p.rotary_dim; j += 16) {
    _mm512_storeu_ps(x + j, rotate_pairs(_mm512_loadu_ps(x + j), _mm512_loadu_ps(c + j),
                                         _mm512_loadu_ps(s + j)));
  }
  if (j < p.rotary_dim) {
    const __mmask16 lanes = mask16(p.rotary_dim - j);
    _mm512_mask_storeu_ps(x + j, lanes,
                          rotate_pairs(_mm512_maskz_loadu_ps(lanes, x + j),
                                       _mm512_maskz_loadu_ps(lanes, c + j),
                                       _mm512_maskz_loadu_ps(lanes, s + j)));
  }
}

void rotate_half_split(const RopeKernelProblem& p, float* x) {
  const int half = p.rotary_dim / 2;
  const float* c = p.table;
  const float* s = p.table + p.rotary_dim;
  const auto rotate = [&](int i, __mmask16 lanes, bool full) {
    const __m512 x1 = full ? _mm512_loadu_ps(x + i) : _mm512_maskz_loadu_ps(lanes, x + i);
    const __m512 x2 = full ? _mm512_loadu_ps(x + half + i) : _mm512_maskz_loadu_ps(lanes, x + half + i);
    const __m512 cv = full ? _mm512_loadu_ps(c + i) : _mm512_maskz_loadu_ps(lanes, c + i);
    const __m512 sv = full ? _mm512_loadu_ps(s + i) : _mm512_maskz_loadu_ps(lanes, s + i);
    const __m512 y1 = _mm512_fnmadd_ps(x2, sv, _mm512_mul_ps(x1, cv));
    const __m512 y2 = _mm512_fmadd_ps(x1, sv, _mm512_mul_ps(x2, cv));
    if (full) {
      _mm512_storeu_ps(x + i, y1);
      _mm512_storeu_ps(x + half + i, y2);
    } else {
      _mm512_mask_storeu_ps(x + i, lanes, y1);
      _mm512_mask_storeu_ps(x + half + i, lanes, y2);
    }
  };
  int i = 0;
  for (; i + 16 <= half; i += 16) rotate(i, 0xFFFF, true);  // plain loads/stores (see above)
  if (i < half) rotate(i, mask16(half - i), false);
}

}  // namespace

void rope_kernel_avx512(const RopeKernelProblem& p) {
  for (std::int64_t t = 0; t < p.tokens; ++t) {
    fill_table(p, static_cast<double>(p.positions[t]));
    float* q = p.q + t * p.q_heads * p.head_dim;
    float* k = p.k + t * p.k_heads * p.head_dim;
    if (p.interleaved) {
      for (std::int64_t h = 0; h < p.q_heads; ++h) rotate_interleaved(p, q + h * p.head_dim);
      for (std::int64_t h = 0; h < p.k_heads; ++h) rotate_interleaved(p, k + h * p.head_dim);
    } else {
      for (std::int64_t h = 0; h < p.q_heads; ++h) rotate_half_split(p, q + h * p.head_dim);
      for (std::int64_t h = 0; h < p.k_heads; ++h) rotate_half_split(p, k + h * p.head_dim);
    }
  }
}

}  // namespace ropecheck::kernels
