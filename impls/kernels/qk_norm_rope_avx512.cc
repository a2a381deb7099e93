// The fused QK-norm + RoPE kernel (qk_norm_rope_kernel.h) with AVX-512: the AVX-512 level's rows
// (rope_kernel_avx512_body.h) and its rotation (rotate_pairs; the half-split's fnmadd and fmadd),
// 16 floats a vector, masked remainders. A head is read twice: once for its sum of squares (two
// accumulators, reduced once), once more from L1 to normalize, rotate and store it. bf16 one
// value a lane (widened by a shift, narrowed by rope_kernel_avx512_bf16.h's integer rounding,
// two vectors packed at once), fp16 by vcvtph2ps / vcvtps2ph. Compiled with the avx512 level's
// flags (CMake object library); only called after cpuid says so.
#include <immintrin.h>

#include "impls/kernels/qk_norm_rope_kernel_body.h"
#include "impls/kernels/rope_kernel_avx512_body.h"

namespace ropecheck::kernels {
namespace {

// The storages as the form reads and writes them: 16 elements a vector, the last n masked, and
// a value rounded to the storage and widened back in registers (the two passes' first).
struct FormAvx512Fp32 : Fp32Storage {
  static __m512 rounded(__m512 v) { return v; }
};

struct FormAvx512Fp16 : Fp16Storage {
  static __m512 rounded(__m512 v) { return _mm512_cvtph_ps(_mm512_cvtps_ph(v, kRounding)); }
};

struct FormAvx512Bf16 {
  using Element = std::uint16_t;
  static __m512 widen(__m256i bits) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16)); }
  static __m512 load(const std::uint16_t* x) { return widen(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x))); }
  static __m512 load(const std::uint16_t* x, __mmask16 lanes) { return widen(_mm256_maskz_loadu_epi16(lanes, x)); }
  static __m256i narrow(__m512 v) { return _mm512_cvtepi32_epi16(_mm512_srli_epi32(rounded_to_top_half(v), 16)); }
  static void store(std::uint16_t* x, __m512 v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(x), narrow(v)); }
  static void store(std::uint16_t* x, __m512 v, __mmask16 lanes) { _mm256_mask_storeu_epi16(x, lanes, narrow(v)); }
  static __m512 rounded(__m512 v) {
    return _mm512_castsi512_ps(_mm512_and_si512(rounded_to_top_half(v), _mm512_set1_epi32(static_cast<int>(0xFFFF0000u))));
  }
};

template <typename S, FormNorm kNorm, bool kRotate>
struct Avx512FormHead {
  using Element = typename S::Element;

  static float sum_of_squares(const Element* x, int d) {
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    int f = 0;
    for (; f + 32 <= d; f += 32) {
      const __m512 a = S::load(x + f), b = S::load(x + f + 16);
      s0 = _mm512_fmadd_ps(a, a, s0);
      s1 = _mm512_fmadd_ps(b, b, s1);
    }
    if (f + 16 <= d) {
      const __m512 a = S::load(x + f);
      s0 = _mm512_fmadd_ps(a, a, s0);
      f += 16;
    }
    if (f < d) {
      const __m512 a = S::load(x + f, mask16(d - f));
      s1 = _mm512_fmadd_ps(a, a, s1);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
  }

  // x r w' as the norm keeps it (x itself without one).
  static __m512 normed(__m512 x, __m512 r, __m512 w) {
    if constexpr (kNorm == FormNorm::none) {
      (void)r, (void)w;
      return x;
    } else if constexpr (kNorm == FormNorm::fp32) {
      return _mm512_mul_ps(_mm512_mul_ps(x, r), w);
    } else {
      return S::rounded(_mm512_mul_ps(S::rounded(_mm512_mul_ps(x, r)), w));
    }
  }
  static __m512 weight(const float* w, int f) {
    if constexpr (kNorm == FormNorm::none) return _mm512_setzero_ps();
    return _mm512_loadu_ps(w + f);
  }
  static __m512 weight(const float* w, int f, __mmask16 lanes) {
    if constexpr (kNorm == FormNorm::none) return _mm512_setzero_ps();
    return _mm512_maskz_loadu_ps(lanes, w + f);
  }

  // 1 / sqrt(s / d + eps) of up to 16 heads, each step one IEEE fp32 operation a lane (the
  // reference's expression).
  static void inverse_rms(const float* s, int count, int d, float eps, float* r) {
    const __mmask16 lanes = mask16(count);
    const __m512 mean = _mm512_add_ps(_mm512_div_ps(_mm512_maskz_loadu_ps(lanes, s), _mm512_set1_ps(static_cast<float>(d))),
                                      _mm512_set1_ps(eps));
    _mm512_mask_storeu_ps(r, lanes, _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_sqrt_ps(mean)));
  }

  static void apply(const QkNormRopeArgs& p, Element* x, const float* w, FormAngles a, float r_value) {
    const int d = p.head_dim;
    const __m512 r = _mm512_set1_ps(r_value);
    const int rotary = kRotate ? p.rotary_dim : 0;
    if constexpr (kRotate) {
      if (p.interleaved) {
        int j = 0;
        for (; j + 16 <= rotary; j += 16) {
          const __m512 v = normed(S::load(x + j), r, weight(w, j));
          S::store(x + j, rotate_pairs(v, _mm512_loadu_ps(a.c + j), _mm512_loadu_ps(a.s + j)));
        }
        if (j < rotary) {
          const __mmask16 lanes = mask16(rotary - j);
          const __m512 v = normed(S::load(x + j, lanes), r, weight(w, j, lanes));
          S::store(x + j, rotate_pairs(v, _mm512_maskz_loadu_ps(lanes, a.c + j), _mm512_maskz_loadu_ps(lanes, a.s + j)),
                   lanes);
        }
      } else {
        const int half = rotary / 2;
        const auto pair = [&](int i, __m512 x1, __m512 x2, __m512 c, __m512 s, auto store) {
          store(x + i, _mm512_fnmadd_ps(x2, s, _mm512_mul_ps(x1, c)));
          store(x + half + i, _mm512_fmadd_ps(x1, s, _mm512_mul_ps(x2, c)));
        };
        int i = 0;
        for (; i + 16 <= half; i += 16) {
          pair(i, normed(S::load(x + i), r, weight(w, i)), normed(S::load(x + half + i), r, weight(w, half + i)),
               _mm512_loadu_ps(a.c + i), _mm512_loadu_ps(a.s + i), [](Element* at, __m512 y) { S::store(at, y); });
        }
        if (i < half) {
          const __mmask16 lanes = mask16(half - i);
          pair(i, normed(S::load(x + i, lanes), r, weight(w, i, lanes)),
               normed(S::load(x + half + i, lanes), r, weight(w, half + i, lanes)), _mm512_maskz_loadu_ps(lanes, a.c + i),
               _mm512_maskz_loadu_ps(lanes, a.s + i), [lanes](Element* at, __m512 y) { S::store(at, y, lanes); });
        }
      }
    }
    // The features past the rotated ones: normalized, not rotated (untouched without a norm).
    if constexpr (kNorm != FormNorm::none) {
      int f = rotary;
      for (; f + 16 <= d; f += 16) S::store(x + f, normed(S::load(x + f), r, weight(w, f)));
      if (f < d) {
        const __mmask16 lanes = mask16(d - f);
        S::store(x + f, normed(S::load(x + f, lanes), r, weight(w, f, lanes)), lanes);
      }
    }
  }
};

}  // namespace

void qk_norm_rope_avx512(const QkNormRopeArgs& p) {
  form_dispatch<Avx512FormHead, Avx512Level<Fp32Storage>, FormAvx512Fp32, FormAvx512Bf16, FormAvx512Fp16>(p);
}

}  // namespace ropecheck::kernels
