// The AVX-512 RoPE kernel body (rope_kernel.h's algorithm), templated on how q and k are stored:
// fp32, or bf16 widened on load and rounded on store by a Narrow policy. Include it ONLY from
// files compiled with AVX-512 flags; everything here has internal linkage, so each such file gets
// its own copy, compiled for its own level.
//   16 floats a vector, 8 angles a SLEEF call, masked loads/stores only for remainders.
//   Loop order: per vector tile of the table, every head of the token, so that cos and sin are
//   loaded once per tile and token, not once per head (one load and one store per q/k vector).
#pragma once

#include <immintrin.h>
#include <sleef.h>

#include <cstdint>

#include "rope_kernel.h"

namespace ropecheck::kernels {
namespace {

inline __mmask16 mask16(int remaining) {
  return remaining >= 16 ? static_cast<__mmask16>(0xFFFF)
                         : static_cast<__mmask16>((1u << remaining) - 1u);
}

inline __mmask8 mask8(int remaining) {
  return remaining >= 8 ? static_cast<__mmask8>(0xFF) : static_cast<__mmask8>((1u << remaining) - 1u);
}

struct Fp32Storage {
  using Element = float;
  static __m512 load(const float* x) { return _mm512_loadu_ps(x); }
  static __m512 load(const float* x, __mmask16 lanes) { return _mm512_maskz_loadu_ps(lanes, x); }
  static void store(float* x, __m512 v) { _mm512_storeu_ps(x, v); }
  static void store(float* x, __m512 v, __mmask16 lanes) { _mm512_mask_storeu_ps(x, lanes, v); }
};

// bf16 is the top half of an fp32: widening is a 16-bit shift, exact.
inline __m512 widen_bf16(__m256i half) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(half), 16));
}

// Round to nearest even with integer ops (any AVX-512 CPU), as storage.h's bf16_from_float:
// add 0x7FFF plus the kept part's lowest bit, keep the top half; a NaN keeps its top half with
// the quiet bit set (the carry could otherwise turn it into Inf).
struct IntegerRoundingBf16 {
  static __m256i narrow(__m512 v) {
    const __m512i bits = _mm512_castps_si512(v);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
    __m512i rounded = _mm512_add_epi32(bits, _mm512_add_epi32(_mm512_set1_epi32(0x7FFF), lsb));
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    rounded = _mm512_mask_or_epi32(rounded, nan, bits, _mm512_set1_epi32(0x00400000));
    return _mm512_cvtepi32_epi16(_mm512_srli_epi32(rounded, 16));
  }
};

template <typename Narrow>
struct Bf16Storage {
  using Element = std::uint16_t;
  static __m512 load(const std::uint16_t* x) {
    return widen_bf16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)));
  }
  static __m512 load(const std::uint16_t* x, __mmask16 lanes) {
    return widen_bf16(_mm256_maskz_loadu_epi16(lanes, x));
  }
  static void store(std::uint16_t* x, __m512 v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(x), Narrow::narrow(v));
  }
  static void store(std::uint16_t* x, __m512 v, __mmask16 lanes) {
    _mm256_mask_storeu_epi16(x, lanes, Narrow::narrow(v));
  }
};

// cos/sin of m * theta_i for the token, into the table layout of rope_kernel.h.
template <typename Args>
void fill_table(const Args& p, double m) {
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

// All `heads` head vectors of one token (consecutive rows of head_dim), interleaved layout.
// Full vectors use plain loads and stores: masked stores are slow on some cores (Zen 4).
template <typename S, typename Args>
void rotate_interleaved(const Args& p, typename S::Element* rows, std::int64_t heads) {
  const float* c = p.table;
  const float* s = p.table + p.rotary_dim;
  int j = 0;
  for (; j + 16 <= p.rotary_dim; j += 16) {
    const __m512 cv = _mm512_loadu_ps(c + j), sv = _mm512_loadu_ps(s + j);
    for (std::int64_t h = 0; h < heads; ++h) {
      auto* x = rows + h * p.head_dim + j;
      S::store(x, rotate_pairs(S::load(x), cv, sv));
    }
  }
  if (j < p.rotary_dim) {
    const __mmask16 lanes = mask16(p.rotary_dim - j);
    const __m512 cv = _mm512_maskz_loadu_ps(lanes, c + j), sv = _mm512_maskz_loadu_ps(lanes, s + j);
    for (std::int64_t h = 0; h < heads; ++h) {
      auto* x = rows + h * p.head_dim + j;
      S::store(x, rotate_pairs(S::load(x, lanes), cv, sv), lanes);
    }
  }
}

// The same for the half-split layout: y1 = x1 c - x2 s, y2 = x2 c + x1 s.
template <typename S, typename Args>
void rotate_half_split(const Args& p, typename S::Element* rows, std::int64_t heads) {
  const int half = p.rotary_dim / 2;
  const float* c = p.table;
  const float* s = p.table + p.rotary_dim;
  const auto rotate = [&](int i, __mmask16 lanes, bool full) {
    const __m512 cv = _mm512_maskz_loadu_ps(lanes, c + i), sv = _mm512_maskz_loadu_ps(lanes, s + i);
    for (std::int64_t h = 0; h < heads; ++h) {
      auto* x1p = rows + h * p.head_dim + i;
      auto* x2p = x1p + half;
      const __m512 x1 = full ? S::load(x1p) : S::load(x1p, lanes);
      const __m512 x2 = full ? S::load(x2p) : S::load(x2p, lanes);
      const __m512 y1 = _mm512_fnmadd_ps(x2, sv, _mm512_mul_ps(x1, cv));
      const __m512 y2 = _mm512_fmadd_ps(x1, sv, _mm512_mul_ps(x2, cv));
      if (full) {
        S::store(x1p, y1);
        S::store(x2p, y2);
      } else {
        S::store(x1p, y1, lanes);
        S::store(x2p, y2, lanes);
      }
    }
  };
  int i = 0;
  for (; i + 16 <= half; i += 16) rotate(i, 0xFFFF, true);
  if (i < half) rotate(i, mask16(half - i), false);
}

template <typename S>
void rope_avx512(const RopeKernelArgs<typename S::Element>& p) {
  for (std::int64_t t = 0; t < p.tokens; ++t) {
    fill_table(p, static_cast<double>(p.positions[t]));
    auto* q = p.q + t * p.q_heads * p.head_dim;
    auto* k = p.k + t * p.k_heads * p.head_dim;
    if (p.interleaved) {
      rotate_interleaved<S>(p, q, p.q_heads);
      rotate_interleaved<S>(p, k, p.k_heads);
    } else {
      rotate_half_split<S>(p, q, p.q_heads);
      rotate_half_split<S>(p, k, p.k_heads);
    }
  }
}

}  // namespace
}  // namespace ropecheck::kernels
