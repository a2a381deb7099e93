// The fused QK-norm + RoPE kernel (qk_norm_rope_kernel.h) with AVX-512: the AVX-512 level's rows
// (rope_kernel_avx512_body.h) and its rotation (rotate_pairs; the half-split's fnmadd and fmadd),
// 16 floats a vector, masked remainders. A head is read twice: once for its sum of squares (two
// accumulators, reduced once), once more from L1 to normalize, rotate and store it. bf16 one
// value a lane (widened by a shift, narrowed by rope_kernel_avx512_bf16.h's integer rounding,
// two vectors packed at once), fp16 by vcvtph2ps / vcvtps2ph. The models' shapes (half-split,
// rotary_dim == head_dim of 64, 128 or 256, the fp32 norm) take FormFast512 in
// qk_norm_rope_kernel_body.h's pipeline: the weight folded into the angles, in registers; bf16
// as even and odd features (a shift and a mask to widen, one ternary-logic merge of two rounded
// vectors to narrow). Compiled with the avx512 level's flags (CMake object library); only called
// after cpuid says so.
#include <immintrin.h>

#include "impls/kernels/qk_norm_rope_kernel_body.h"
#include "impls/kernels/rope_kernel_avx512_body.h"

namespace ropecheck::kernels {
namespace {

// The fast path's storages: 32 elements as two fp32 vectors in the storage's lane order (bf16:
// the even features, then the odd ones, as the 32-bit lanes hold them; fp32 and fp16: in order),
// and 32 fp32 coefficients in the same order.
struct FormFastFp32 {
  static void load2(const float* x, __m512& a, __m512& b) {
    a = _mm512_loadu_ps(x);
    b = _mm512_loadu_ps(x + 16);
  }
  static void store2(float* x, __m512 a, __m512 b) {
    _mm512_storeu_ps(x, a);
    _mm512_storeu_ps(x + 16, b);
  }
  static void store2_plain(float* x, __m512 a, __m512 b) { store2(x, a, b); }
  static void coefficients(const float* at, __m512& a, __m512& b) { load2(at, a, b); }
};

struct FormFastFp16 {
  static void load2(const Fp16* x, __m512& a, __m512& b) {
    a = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)));
    b = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 16)));
  }
  static void store2(Fp16* x, __m512 a, __m512 b) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(x), _mm512_cvtps_ph(a, Fp16Storage::kRounding));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(x + 16), _mm512_cvtps_ph(b, Fp16Storage::kRounding));
  }
  static void store2_plain(Fp16* x, __m512 a, __m512 b) { store2(x, a, b); }
  static void coefficients(const float* at, __m512& a, __m512& b) { FormFastFp32::load2(at, a, b); }
};

struct FormFastBf16 {
  static void load2(const std::uint16_t* x, __m512& a, __m512& b) {
    const __m512i v = _mm512_loadu_si512(x);
    a = _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
    b = _mm512_castsi512_ps(_mm512_and_si512(v, _mm512_set1_epi32(static_cast<int>(0xFFFF0000u))));
  }
  static void store2(std::uint16_t* x, __m512 a, __m512 b) {
    _mm512_storeu_si512(x, IntegerRoundingBf16::narrow_pairs(a, b));
  }
  // The same rounding of values known to be no NaN (form_pipeline's plain heads): without the
  // NaN case's compare and masked or.
  static void store2_plain(std::uint16_t* x, __m512 a, __m512 b) {
    const auto rounded = [](__m512 v) {
      const __m512i bits = _mm512_castps_si512(v);
      const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
      return _mm512_add_epi32(bits, _mm512_add_epi32(_mm512_set1_epi32(0x7FFF), lsb));
    };
    _mm512_storeu_si512(x, _mm512_ternarylogic_epi32(rounded(b), _mm512_set1_epi32(static_cast<int>(0xFFFF0000u)),
                                                     _mm512_srli_epi32(rounded(a), 16), 0xEA));
  }
  static void coefficients(const float* at, __m512& a, __m512& b) {
    a = every_other(at, 32, false);
    b = every_other(at, 32, true);
  }
};

// The storages as the form reads and writes them: 16 elements a vector, the last n masked, and
// a value rounded to the storage and widened back in registers (the two passes' first).
struct FormAvx512Fp32 : Fp32Storage {
  using Fast = FormFastFp32;
  static __m512 rounded(__m512 v) { return v; }
};

struct FormAvx512Fp16 : Fp16Storage {
  using Fast = FormFastFp16;
  static __m512 rounded(__m512 v) { return _mm512_cvtph_ps(_mm512_cvtps_ph(v, kRounding)); }
};

struct FormAvx512Bf16 {
  using Element = std::uint16_t;
  using Fast = FormFastBf16;
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

// The fast path (qk_norm_rope_kernel_body.h's form_pipeline): half-split, rotary_dim ==
// head_dim == D (64, 128 or 256), the norm in fp32. Per token and view the weight is folded into
// the angles once (wc1 = w_i c_i, ws1 = w_i s_i, wc2 = w_(h+i) c_i, ws2 = w_(h+i) s_i, one product
// each, kept in registers), then each head is read once from L1 into registers: y1 = x1 r wc1 -
// x2 r ws2, y2 = x2 r wc2 + x1 r ws1, stored once. The roundings are the unfused chain's count
// (x r, w c, the cache's c, the product): the same bound.
template <typename F, typename E, int D>
struct FormFast512 {
  using Element = E;
  static constexpr int kHalf = D / 2, kVectors = kHalf / 16;  // vectors a half

  struct Folded {
    __m512 wc1[kVectors], ws1[kVectors], wc2[kVectors], ws2[kVectors];
  };
  static Folded fold(const float* w, FormAngles a) {
    Folded k;
#pragma GCC unroll 8
    for (int b = 0; b < kVectors; b += 2) {
      __m512 c[2], s[2], w1[2], w2[2];
      F::coefficients(a.c + 16 * b, c[0], c[1]);
      F::coefficients(a.s + 16 * b, s[0], s[1]);
      F::coefficients(w + 16 * b, w1[0], w1[1]);
      F::coefficients(w + kHalf + 16 * b, w2[0], w2[1]);
      for (int j = 0; j < 2; ++j) {
        k.wc1[b + j] = _mm512_mul_ps(w1[j], c[j]);
        k.ws1[b + j] = _mm512_mul_ps(w1[j], s[j]);
        k.wc2[b + j] = _mm512_mul_ps(w2[j], c[j]);
        k.ws2[b + j] = _mm512_mul_ps(w2[j], s[j]);
      }
    }
    return k;
  }

  static bool finite(const Folded& k) {
    const __m512 bound = _mm512_set1_ps(kFormPlainCoefficient);
    __mmask16 below = 0xFFFF;
    for (int j = 0; j < kVectors; ++j) {
      below &= _mm512_cmp_ps_mask(_mm512_abs_ps(k.wc1[j]), bound, _CMP_LT_OQ) &
               _mm512_cmp_ps_mask(_mm512_abs_ps(k.ws1[j]), bound, _CMP_LT_OQ) &
               _mm512_cmp_ps_mask(_mm512_abs_ps(k.wc2[j]), bound, _CMP_LT_OQ) &
               _mm512_cmp_ps_mask(_mm512_abs_ps(k.ws2[j]), bound, _CMP_LT_OQ);
    }
    return below == 0xFFFF;
  }

  static float sum_of_squares(const Element* x) {
    __m512 acc[4];
#pragma GCC unroll 8
    for (int b = 0; b < 2 * kVectors; b += 2) {
      __m512 u, v;
      F::load2(x + 16 * b, u, v);
      const int j = b % 4;
      acc[j] = b < 4 ? _mm512_mul_ps(u, u) : _mm512_fmadd_ps(u, u, acc[j]);
      acc[j + 1] = b < 4 ? _mm512_mul_ps(v, v) : _mm512_fmadd_ps(v, v, acc[j + 1]);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
  }

  template <bool kPlain>
  static void apply(Element* x, float r_value, const Folded& k) {
    const __m512 r = _mm512_set1_ps(r_value);
#pragma GCC unroll 8
    for (int b = 0; b < kVectors; b += 2) {
      __m512 x1[2], x2[2];
      F::load2(x + 16 * b, x1[0], x1[1]);
      F::load2(x + kHalf + 16 * b, x2[0], x2[1]);
      __m512 y1[2], y2[2];
      for (int j = 0; j < 2; ++j) {
        const __m512 r1 = _mm512_mul_ps(x1[j], r), r2 = _mm512_mul_ps(x2[j], r);
        y1[j] = _mm512_fnmadd_ps(r2, k.ws2[b + j], _mm512_mul_ps(r1, k.wc1[b + j]));
        y2[j] = _mm512_fmadd_ps(r2, k.wc2[b + j], _mm512_mul_ps(r1, k.ws1[b + j]));
      }
      if constexpr (kPlain) {
        F::store2_plain(x + 16 * b, y1[0], y1[1]);
        F::store2_plain(x + kHalf + 16 * b, y2[0], y2[1]);
      } else {
        F::store2(x + 16 * b, y1[0], y1[1]);
        F::store2(x + kHalf + 16 * b, y2[0], y2[1]);
      }
    }
  }
};

template <typename S, FormNorm kNorm, bool kRotate>
struct Avx512FormHead {
  using Element = typename S::Element;

  // The fast path (FormFast512, form_pipeline) where it applies.
  static bool fast_token(const QkNormRopeArgs& p, std::int64_t t, FormAngles a)
    requires(kNorm == FormNorm::fp32 && kRotate)
  {
    if (p.fast == nullptr || p.interleaved || p.rotary_dim != p.head_dim ||
        p.q_view.heads + p.k_view.heads > FormFastState::kMaxHeads) {
      return false;
    }
    switch (p.head_dim) {
      case 64: form_pipeline<FormFast512<typename S::Fast, Element, 64>, Avx512FormHead>(p, t, a); return true;
      case 128: form_pipeline<FormFast512<typename S::Fast, Element, 128>, Avx512FormHead>(p, t, a); return true;
      case 256: form_pipeline<FormFast512<typename S::Fast, Element, 256>, Avx512FormHead>(p, t, a); return true;
      default: return false;
    }
  }

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
