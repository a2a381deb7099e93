// The fused QK-norm + RoPE kernel (qk_norm_rope_kernel.h) with AVX2 + FMA + F16C: the AVX2
// level's rows (rope_kernel_avx2_body.h) and its rotation (rotate_pairs; the half-split's fnmadd
// and fmadd), 8 floats a vector, with its storage policies (bf16 and fp16 rounded as its kernels
// round them; 16-bit remainders through their stack buffer). A head is read twice: once for its
// sum of squares (two accumulators), once more from L1 to normalize, rotate and store it.
// Compiled with -mavx2 -mfma -mf16c (CMake object library); only called after cpuid says so.
#include <immintrin.h>

#include "impls/kernels/qk_norm_rope_kernel_body.h"
#include "impls/kernels/rope_kernel_avx2_body.h"

namespace ropecheck::kernels {
namespace {

// The storages with a value rounded to the storage and widened back in registers (the two
// passes' first).
struct FormAvx2Fp32 : Fp32Storage {
  static __m256 rounded(__m256 v) { return v; }
};

struct FormAvx2Fp16 : Fp16Storage {
  static __m256 rounded(__m256 v) { return _mm256_cvtph_ps(_mm256_cvtps_ph(v, kRounding)); }
};

struct FormAvx2Bf16 : Bf16Storage {
  // Bf16Storage's rounding (storage.h's bf16_from_float), kept in the top half.
  static __m256 rounded(__m256 v) {
    const __m256i bits = _mm256_castps_si256(v);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
    const __m256i up = _mm256_add_epi32(bits, _mm256_add_epi32(_mm256_set1_epi32(0x7FFF), lsb));
    const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    const __m256i quiet = _mm256_or_si256(bits, _mm256_set1_epi32(0x00400000));
    return _mm256_castsi256_ps(
        _mm256_and_si256(_mm256_blendv_epi8(up, quiet, nan), _mm256_set1_epi32(static_cast<int>(0xFFFF0000u))));
  }
};

inline float form_reduce_add(__m256 v) {
  const __m128 four = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 two = _mm_add_ps(four, _mm_movehl_ps(four, four));
  return _mm_cvtss_f32(_mm_add_ss(two, _mm_movehdup_ps(two)));
}

template <typename S, FormNorm kNorm, bool kRotate>
struct Avx2FormHead {
  using Element = typename S::Element;

  static float sum_of_squares(const Element* x, int d) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    int f = 0;
    for (; f + 16 <= d; f += 16) {
      const __m256 a = S::load(x + f), b = S::load(x + f + 8);
      s0 = _mm256_fmadd_ps(a, a, s0);
      s1 = _mm256_fmadd_ps(b, b, s1);
    }
    if (f + 8 <= d) {
      const __m256 a = S::load(x + f);
      s0 = _mm256_fmadd_ps(a, a, s0);
      f += 8;
    }
    if (f < d) {
      const __m256 a = S::load_first(x + f, d - f);
      s1 = _mm256_fmadd_ps(a, a, s1);
    }
    return form_reduce_add(_mm256_add_ps(s0, s1));
  }

  static __m256 normed(__m256 x, __m256 r, __m256 w) {
    if constexpr (kNorm == FormNorm::none) {
      (void)r, (void)w;
      return x;
    } else if constexpr (kNorm == FormNorm::fp32) {
      return _mm256_mul_ps(_mm256_mul_ps(x, r), w);
    } else {
      return S::rounded(_mm256_mul_ps(S::rounded(_mm256_mul_ps(x, r)), w));
    }
  }
  static __m256 weight(const float* w, int f) {
    if constexpr (kNorm == FormNorm::none) return _mm256_setzero_ps();
    return _mm256_loadu_ps(w + f);
  }
  static __m256 weight(const float* w, int f, int n) {
    if constexpr (kNorm == FormNorm::none) return _mm256_setzero_ps();
    return _mm256_maskload_ps(w + f, mask8(n));
  }

  // 1 / sqrt(s / d + eps) of up to 16 heads, 8 a vector, each step one IEEE fp32 operation a lane
  // (the reference's expression).
  static void inverse_rms(const float* s, int count, int d, float eps, float* r) {
    for (int i = 0; i < count; i += 8) {
      const __m256i lanes = mask8(count - i);
      const __m256 mean = _mm256_add_ps(_mm256_div_ps(_mm256_maskload_ps(s + i, lanes), _mm256_set1_ps(static_cast<float>(d))),
                                        _mm256_set1_ps(eps));
      _mm256_maskstore_ps(r + i, lanes, _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_sqrt_ps(mean)));
    }
  }

  static void apply(const QkNormRopeArgs& p, Element* x, const float* w, FormAngles a, float r_value) {
    const int d = p.head_dim;
    const __m256 r = _mm256_set1_ps(r_value);
    const int rotary = kRotate ? p.rotary_dim : 0;
    if constexpr (kRotate) {
      if (p.interleaved) {
        int j = 0;
        for (; j + 16 <= rotary; j += 16) {
          const __m256 y0 = rotate_pairs(normed(S::load(x + j), r, weight(w, j)), _mm256_loadu_ps(a.c + j),
                                         _mm256_loadu_ps(a.s + j));
          const __m256 y1 = rotate_pairs(normed(S::load(x + j + 8), r, weight(w, j + 8)), _mm256_loadu_ps(a.c + j + 8),
                                         _mm256_loadu_ps(a.s + j + 8));
          S::store2(x + j, y0, y1);
        }
        if (j + 8 <= rotary) {
          S::store(x + j, rotate_pairs(normed(S::load(x + j), r, weight(w, j)), _mm256_loadu_ps(a.c + j),
                                       _mm256_loadu_ps(a.s + j)));
          j += 8;
        }
        if (j < rotary) {
          const int n = rotary - j;
          const __m256i lanes = mask8(n);
          S::store_first(x + j,
                         rotate_pairs(normed(S::load_first(x + j, n), r, weight(w, j, n)),
                                      _mm256_maskload_ps(a.c + j, lanes), _mm256_maskload_ps(a.s + j, lanes)),
                         n);
        }
      } else {
        const int half = rotary / 2;
        int i = 0;
        const auto y = [](__m256 x1, __m256 x2, __m256 c, __m256 s, __m256& y1, __m256& y2) {
          y1 = _mm256_fnmadd_ps(x2, s, _mm256_mul_ps(x1, c));
          y2 = _mm256_fmadd_ps(x1, s, _mm256_mul_ps(x2, c));
        };
        for (; i + 16 <= half; i += 16) {
          __m256 a1, a2, b1, b2;
          y(normed(S::load(x + i), r, weight(w, i)), normed(S::load(x + half + i), r, weight(w, half + i)),
            _mm256_loadu_ps(a.c + i), _mm256_loadu_ps(a.s + i), a1, a2);
          y(normed(S::load(x + i + 8), r, weight(w, i + 8)), normed(S::load(x + half + i + 8), r, weight(w, half + i + 8)),
            _mm256_loadu_ps(a.c + i + 8), _mm256_loadu_ps(a.s + i + 8), b1, b2);
          S::store2(x + i, a1, b1);
          S::store2(x + half + i, a2, b2);
        }
        for (; i + 8 <= half; i += 8) {
          __m256 y1, y2;
          y(normed(S::load(x + i), r, weight(w, i)), normed(S::load(x + half + i), r, weight(w, half + i)),
            _mm256_loadu_ps(a.c + i), _mm256_loadu_ps(a.s + i), y1, y2);
          S::store(x + i, y1);
          S::store(x + half + i, y2);
        }
        if (i < half) {
          const int n = half - i;
          const __m256i lanes = mask8(n);
          __m256 y1, y2;
          y(normed(S::load_first(x + i, n), r, weight(w, i, n)), normed(S::load_first(x + half + i, n), r, weight(w, half + i, n)),
            _mm256_maskload_ps(a.c + i, lanes), _mm256_maskload_ps(a.s + i, lanes), y1, y2);
          S::store_first(x + i, y1, n);
          S::store_first(x + half + i, y2, n);
        }
      }
    }
    // The features past the rotated ones: normalized, not rotated (untouched without a norm).
    if constexpr (kNorm != FormNorm::none) {
      int f = rotary;
      for (; f + 16 <= d; f += 16) {
        S::store2(x + f, normed(S::load(x + f), r, weight(w, f)), normed(S::load(x + f + 8), r, weight(w, f + 8)));
      }
      for (; f + 8 <= d; f += 8) S::store(x + f, normed(S::load(x + f), r, weight(w, f)));
      if (f < d) S::store_first(x + f, normed(S::load_first(x + f, d - f), r, weight(w, f, d - f)), d - f);
    }
  }
};

}  // namespace

void qk_norm_rope_avx2(const QkNormRopeArgs& p) {
  form_dispatch<Avx2FormHead, Avx2Level<Fp32Storage>, FormAvx2Fp32, FormAvx2Bf16, FormAvx2Fp16>(p);
}

}  // namespace ropecheck::kernels
