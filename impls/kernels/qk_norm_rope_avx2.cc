// The fused QK-norm + RoPE kernel (qk_norm_rope_kernel.h) with AVX2 + FMA + F16C: the AVX2
// level's rows (rope_kernel_avx2_body.h) and its rotation (rotate_pairs; the half-split's fnmadd
// and fmadd), 8 floats a vector, with its storage policies (bf16 and fp16 rounded as its kernels
// round them; 16-bit remainders through their stack buffer). A head is read twice: once for its
// sum of squares (two accumulators), once more from L1 to normalize, rotate and store it. The
// models' shapes (half-split, rotary_dim == head_dim of 64, 128 or 256, the fp32 norm) take
// FormFast256 in qk_norm_rope_kernel_body.h's pipeline: the weight folded into the angles, in an
// L1 row; bf16 as even and odd features (a shift and a mask to widen, one blend to narrow).
// Compiled with -mavx2 -mfma -mf16c (CMake object library); only called after cpuid says so.
#include <immintrin.h>

#include "impls/kernels/qk_norm_rope_kernel_body.h"
#include "impls/kernels/rope_kernel_avx2_body.h"

namespace ropecheck::kernels {
namespace {

// The fast path's storages: 16 elements as two fp32 vectors in the storage's lane order (bf16:
// the even features, then the odd ones, as the 32-bit lanes hold them; fp32 and fp16: in order),
// and 16 fp32 coefficients in the same order.
struct FormFast2Fp32 {
  static void load2(const float* x, __m256& a, __m256& b) {
    a = _mm256_loadu_ps(x);
    b = _mm256_loadu_ps(x + 8);
  }
  static void store2(float* x, __m256 a, __m256 b) {
    _mm256_storeu_ps(x, a);
    _mm256_storeu_ps(x + 8, b);
  }
  static void store2_plain(float* x, __m256 a, __m256 b) { store2(x, a, b); }
  static void coefficients(const float* at, __m256& a, __m256& b) { load2(at, a, b); }
};

struct FormFast2Fp16 {
  static void load2(const Fp16* x, __m256& a, __m256& b) {
    a = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x)));
    b = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + 8)));
  }
  static void store2(Fp16* x, __m256 a, __m256 b) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(x), _mm256_cvtps_ph(a, Fp16Storage::kRounding));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(x + 8), _mm256_cvtps_ph(b, Fp16Storage::kRounding));
  }
  static void store2_plain(Fp16* x, __m256 a, __m256 b) { store2(x, a, b); }
  static void coefficients(const float* at, __m256& a, __m256& b) { FormFast2Fp32::load2(at, a, b); }
};

struct FormFast2Bf16 {
  static void load2(const std::uint16_t* x, __m256& a, __m256& b) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x));
    a = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
    b = _mm256_castsi256_ps(_mm256_and_si256(v, _mm256_set1_epi32(static_cast<int>(0xFFFF0000u))));
  }
  // Bf16Storage's rounding (storage.h's bf16_from_float) of the even and the odd features, each
  // kept in its lane's top half, then the even ones moved down: one 256-bit store.
  static void store2(std::uint16_t* x, __m256 a, __m256 b) {
    const __m256i even = _mm256_srli_epi32(rounded(a), 16);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(x), _mm256_blend_epi16(even, rounded(b), 0xAA));
  }
  // The same rounding of values known to be no NaN (form_pipeline's plain heads), without the
  // NaN case, and in 16-bit lanes after the even and odd features are merged (9 operations for 16
  // values instead of 10): t the top halves, l the dropped low halves; bits + 0x7FFF + lsb carries
  // into t when l + (t & 1) + 0x7FFF >= 2^16, bit 15 of avg(l, 0x7FFE | (t & 1)) (avg sums in 17
  // bits). t + 1 drops its carry as bit 31 of the 32-bit sum does.
  static void store2_plain(std::uint16_t* x, __m256 a, __m256 b) {
    const __m256i ia = _mm256_castps_si256(a), ib = _mm256_castps_si256(b);
    const __m256i t = _mm256_blend_epi16(_mm256_srli_epi32(ia, 16), ib, 0xAA);
    const __m256i l = _mm256_blend_epi16(ia, _mm256_slli_epi32(ib, 16), 0xAA);
    const __m256i bias = _mm256_or_si256(_mm256_and_si256(t, _mm256_set1_epi16(1)), _mm256_set1_epi16(0x7FFE));
    const __m256i carry = _mm256_srli_epi16(_mm256_avg_epu16(l, bias), 15);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(x), _mm256_add_epi16(t, carry));
  }
  static void coefficients(const float* at, __m256& a, __m256& b) {
    const __m256 lo = _mm256_loadu_ps(at), hi = _mm256_loadu_ps(at + 8);
    // [lo0 lo2 hi0 hi2 | lo4 lo6 hi4 hi6], then the 64-bit pieces in order.
    a = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0x88)), 0xD8));
    b = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0xDD)), 0xD8));
  }

 private:
  static __m256i rounded_plain(__m256 v) {
    const __m256i bits = _mm256_castps_si256(v);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
    return _mm256_add_epi32(bits, _mm256_add_epi32(_mm256_set1_epi32(0x7FFF), lsb));
  }
  static __m256i rounded(__m256 v) {
    const __m256i bits = _mm256_castps_si256(v);
    const __m256i up = rounded_plain(v);
    const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    const __m256i quiet = _mm256_or_si256(bits, _mm256_set1_epi32(0x00400000));
    return _mm256_blendv_epi8(up, quiet, nan);
  }
};

// The storages with a value rounded to the storage and widened back in registers (the two
// passes' first).
struct FormAvx2Fp32 : Fp32Storage {
  using Fast = FormFast2Fp32;
  static __m256 rounded(__m256 v) { return v; }
};

struct FormAvx2Fp16 : Fp16Storage {
  using Fast = FormFast2Fp16;
  static __m256 rounded(__m256 v) { return _mm256_cvtph_ps(_mm256_cvtps_ph(v, kRounding)); }
};

struct FormAvx2Bf16 : Bf16Storage {
  using Fast = FormFast2Bf16;
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

// The fast path (qk_norm_rope_kernel_body.h's form_pipeline): half-split, rotary_dim ==
// head_dim == D (64, 128 or 256), the norm in fp32. Per token and view the weight is folded into
// the angles once (wc1 = w_i c_i, ws1 = w_i s_i, wc2 = w_(h+i) c_i, ws2 = w_(h+i) s_i, one product
// each) into an L1 row (16 ymm hold no more than a head of 128), then each head: y1 = x1 r wc1 -
// x2 r ws2, y2 = x2 r wc2 + x1 r ws1, stored once. The roundings are the unfused chain's count
// (x r, w c, the cache's c, the product): the same bound.
template <typename F, typename E, int D>
struct FormFast256 {
  using Element = E;
  static constexpr int kHalf = D / 2, kVectors = kHalf / 8;  // vectors a half

  struct Folded {
    alignas(32) float row[4 * kHalf];  // per vector j: wc1, ws1, wc2, ws2 at 32 j
  };
  static Folded fold(const float* w, FormAngles a) {
    Folded k;
    for (int b = 0; b < kVectors; b += 2) {
      __m256 c[2], s[2], w1[2], w2[2];
      F::coefficients(a.c + 8 * b, c[0], c[1]);
      F::coefficients(a.s + 8 * b, s[0], s[1]);
      F::coefficients(w + 8 * b, w1[0], w1[1]);
      F::coefficients(w + kHalf + 8 * b, w2[0], w2[1]);
      for (int j = 0; j < 2; ++j) {
        float* at = k.row + 32 * (b + j);
        _mm256_store_ps(at, _mm256_mul_ps(w1[j], c[j]));
        _mm256_store_ps(at + 8, _mm256_mul_ps(w1[j], s[j]));
        _mm256_store_ps(at + 16, _mm256_mul_ps(w2[j], c[j]));
        _mm256_store_ps(at + 24, _mm256_mul_ps(w2[j], s[j]));
      }
    }
    return k;
  }

  static bool finite(const Folded& k) {
    const __m256 bound = _mm256_set1_ps(kFormPlainCoefficient);
    const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    __m256 below = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
    for (int j = 0; j < 4 * kHalf; j += 8) {
      below = _mm256_and_ps(below, _mm256_cmp_ps(_mm256_and_ps(_mm256_load_ps(k.row + j), magnitude), bound, _CMP_LT_OQ));
    }
    return _mm256_movemask_ps(below) == 0xFF;
  }

  static float sum_of_squares(const Element* x) {
    __m256 acc[4];
#pragma GCC unroll 16
    for (int b = 0; b < 2 * kVectors; b += 2) {
      __m256 u, v;
      F::load2(x + 8 * b, u, v);
      const int j = b % 4;
      acc[j] = b < 4 ? _mm256_mul_ps(u, u) : _mm256_fmadd_ps(u, u, acc[j]);
      acc[j + 1] = b < 4 ? _mm256_mul_ps(v, v) : _mm256_fmadd_ps(v, v, acc[j + 1]);
    }
    return form_reduce_add(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
  }

  template <bool kPlain>
  static void apply(Element* x, float r_value, const Folded& k) {
    const __m256 r = _mm256_set1_ps(r_value);
#pragma GCC unroll 8
    for (int b = 0; b < kVectors; b += 2) {
      __m256 x1[2], x2[2], y1[2], y2[2];
      F::load2(x + 8 * b, x1[0], x1[1]);
      F::load2(x + kHalf + 8 * b, x2[0], x2[1]);
      for (int j = 0; j < 2; ++j) {
        const float* at = k.row + 32 * (b + j);
        const __m256 r1 = _mm256_mul_ps(x1[j], r), r2 = _mm256_mul_ps(x2[j], r);
        y1[j] = _mm256_fnmadd_ps(r2, _mm256_load_ps(at + 24), _mm256_mul_ps(r1, _mm256_load_ps(at)));
        y2[j] = _mm256_fmadd_ps(r2, _mm256_load_ps(at + 16), _mm256_mul_ps(r1, _mm256_load_ps(at + 8)));
      }
      if constexpr (kPlain) {
        F::store2_plain(x + 8 * b, y1[0], y1[1]);
        F::store2_plain(x + kHalf + 8 * b, y2[0], y2[1]);
      } else {
        F::store2(x + 8 * b, y1[0], y1[1]);
        F::store2(x + kHalf + 8 * b, y2[0], y2[1]);
      }
    }
  }
};

template <typename S, FormNorm kNorm, bool kRotate>
struct Avx2FormHead {
  using Element = typename S::Element;

  // The fast path (FormFast256, form_pipeline) where it applies.
  static bool fast_token(const QkNormRopeArgs& p, std::int64_t t, FormAngles a)
    requires(kNorm == FormNorm::fp32 && kRotate)
  {
    if (p.fast == nullptr || p.interleaved || p.rotary_dim != p.head_dim ||
        p.q_view.heads + p.k_view.heads > FormFastState::kMaxHeads) {
      return false;
    }
    switch (p.head_dim) {
      case 64: form_pipeline<FormFast256<typename S::Fast, Element, 64>, Avx2FormHead>(p, t, a); return true;
      case 128: form_pipeline<FormFast256<typename S::Fast, Element, 128>, Avx2FormHead>(p, t, a); return true;
      case 256: form_pipeline<FormFast256<typename S::Fast, Element, 256>, Avx2FormHead>(p, t, a); return true;
      default: return false;
    }
  }

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
