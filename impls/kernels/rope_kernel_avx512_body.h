// The AVX-512 RoPE kernel body (rope_kernel.h's algorithm), templated on how q and k are stored:
// fp32, fp16 (vcvtph2ps and vcvtps2ph, both AVX-512 F), or bf16 two values a 32-bit lane with a
// Narrow policy's rounding (rope_kernel_avx512_bf16.h). Include it ONLY from
// files compiled with AVX-512 flags; everything here has internal linkage, so each such file gets
// its own copy, compiled for its own level.
//   16 floats a vector, 8 angles a SLEEF call, masked loads/stores only for remainders.
//   cos/sin stay in registers while every head of the token is rotated (see rotate_heads).
#pragma once

#include <immintrin.h>
#include <sleef.h>

#include <cstdint>

#include "impls/kernels/rope_kernel.h"
#include "impls/kernels/rope_kernel_avx512_bf16.h"
#include "impls/kernels/rope_kernel_avx512_tiles.h"

namespace ropecheck::kernels {
namespace {

struct Fp32Storage {
  using Element = float;
  static __m512 load(const float* x) { return _mm512_loadu_ps(x); }
  static __m512 load(const float* x, __mmask16 lanes) { return _mm512_maskz_loadu_ps(lanes, x); }
  static void store(float* x, __m512 v) { _mm512_storeu_ps(x, v); }
  static void store(float* x, __m512 v, __mmask16 lanes) { _mm512_mask_storeu_ps(x, lanes, v); }
};

// vcvtps2ph rounding to nearest even whatever MXCSR says; it keeps subnormal results and turns a
// NaN into a quiet NaN with its sign and top payload bits, as storage.h's fp16_from_float.
struct Fp16Storage {
  using Element = Fp16;
  static constexpr int kRounding = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  static __m512 load(const Fp16* x) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)));
  }
  static __m512 load(const Fp16* x, __mmask16 lanes) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(lanes, x));
  }
  static void store(Fp16* x, __m512 v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(x), _mm512_cvtps_ph(v, kRounding));
  }
  static void store(Fp16* x, __m512 v, __mmask16 lanes) {
    _mm256_mask_storeu_epi16(x, lanes, _mm512_cvtps_ph(v, kRounding));
  }
};

// The angle steps of rope_kernel.h, 8 doubles a vector. Full vectors use plain loads and
// stores, the remainder masked ones (masked stores are slow on Zen 4, and a masked load cannot
// take its data from a store still in flight). Each new cos/sin vector is rounded into the table
// straight from its registers.

// cos/sin of pairs [i, i + 8) (lanes of them) rounded to fp32, into the table layout of
// rope_kernel.h.
template <typename Args>
inline void emit_table(const Args& p, int i, __mmask8 lanes, __m512d cos_d, __m512d sin_d) {
  float* cos_table = p.table;
  float* sin_table = p.table + p.rotary_dim;
  // times the attention factor in double, then one rounding (exact when it is 1)
  const __m512d scale = _mm512_set1_pd(p.cos_sin_scale);
  const __m256 c = _mm512_cvtpd_ps(_mm512_mul_pd(cos_d, scale));
  const __m256 s = _mm512_cvtpd_ps(_mm512_mul_pd(sin_d, scale));
  const bool full = lanes == 0xFF;
  if (p.interleaved) {
    // [0 0 1 1 ... 7 7]: each of 8 values twice, for the interleaved layout's pairs.
    const __m512i duplicate = _mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
    const __m512 c2 = _mm512_permutexvar_ps(duplicate, _mm512_castps256_ps512(c));
    const __m512 s2 = _mm512_permutexvar_ps(duplicate, _mm512_castps256_ps512(s));
    // negate the even lanes: sin_signed = [-s0 s0 -s1 s1 ...]
    const __m512 s2_signed = _mm512_mask_sub_ps(s2, 0x5555, _mm512_setzero_ps(), s2);
    if (full) {
      _mm512_storeu_ps(cos_table + 2 * i, c2);
      _mm512_storeu_ps(sin_table + 2 * i, s2_signed);
    } else {
      const __mmask16 pair_lanes = mask16(2 * __builtin_popcount(lanes));
      _mm512_mask_storeu_ps(cos_table + 2 * i, pair_lanes, c2);
      _mm512_mask_storeu_ps(sin_table + 2 * i, pair_lanes, s2_signed);
    }
  } else if (full) {
    _mm256_storeu_ps(cos_table + i, c);
    _mm256_storeu_ps(sin_table + i, s);
  } else {
    _mm256_mask_storeu_ps(cos_table + i, lanes, c);
    _mm256_mask_storeu_ps(sin_table + i, lanes, s);
  }
}

inline __m512d load_pd(const double* at, __mmask8 lanes) {
  return lanes == 0xFF ? _mm512_loadu_pd(at) : _mm512_maskz_loadu_pd(lanes, at);
}
inline void store_pd(double* at, __mmask8 lanes, __m512d v) {
  lanes == 0xFF ? _mm512_storeu_pd(at, v) : _mm512_mask_storeu_pd(at, lanes, v);
}

// cos/sin of scale * theta_i into (cos_out, sin_out), and into the table when `emit`.
template <typename Args>
void sincos_of_theta(const Args& p, double scale, double* cos_out, double* sin_out, bool emit) {
  const int half = p.rotary_dim / 2;
  const __m512d factor = _mm512_set1_pd(scale);
  for (int i = 0; i < half; i += 8) {
    const __mmask8 lanes = mask8(half - i);
    const __m512d angle = _mm512_mul_pd(factor, load_pd(p.theta + i, lanes));
    const Sleef___m512d_2 sc = Sleef_sincosd8_u35avx512f(angle);
    store_pd(sin_out + i, lanes, sc.x);
    store_pd(cos_out + i, lanes, sc.y);
    if (emit) emit_table(p, i, lanes, sc.y, sc.x);
  }
}

// The AngleState to the next position by the step rotation, and into the table.
template <typename Args>
void advance_angles(const Args& p) {
  const AngleState a = angle_state(p);
  const int half = p.rotary_dim / 2;
  for (int i = 0; i < half; i += 8) {
    const __mmask8 lanes = mask8(half - i);
    const __m512d c = load_pd(a.cos_m + i, lanes), s = load_pd(a.sin_m + i, lanes);
    const __m512d cs = load_pd(a.cos_step + i, lanes), ss = load_pd(a.sin_step + i, lanes);
    const __m512d c_next = _mm512_fmsub_pd(c, cs, _mm512_mul_pd(s, ss));
    const __m512d s_next = _mm512_fmadd_pd(s, cs, _mm512_mul_pd(c, ss));
    store_pd(a.cos_m + i, lanes, c_next);
    store_pd(a.sin_m + i, lanes, s_next);
    emit_table(p, i, lanes, c_next, s_next);
  }
}

// One vector of interleaved pairs: y = x * cos_dup + swap_pairs(x) * sin_signed.
inline __m512 rotate_pairs(__m512 v, __m512 c, __m512 s) {
  // Pin v to a register: otherwise GCC folds the load into both the multiply and the permute,
  // two 512-bit loads per vector where one will do (loads are the bottleneck in cache).
  asm("" : "+v"(v));
  const __m512 swapped = _mm512_permute_ps(v, 0xB1);  // (x0 x1 x2 x3) -> (x1 x0 x3 x2)
  return _mm512_fmadd_ps(swapped, s, _mm512_mul_ps(v, c));
}

// Interleaved layout: features [16 first, 16 (first + N)) of every head, plus `tail` lanes of
// the tile after them.
template <typename S, int N, typename Args>
void rotate_interleaved_chunk(const Args& p, Rows<S> q, Rows<S> k, int first, __mmask16 tail) {
  const float* c = p.table + 16 * first;
  const float* s = p.table + p.rotary_dim + 16 * first;
  __m512 cv[N + 1], sv[N + 1];
#pragma GCC unroll 8
  for (int t = 0; t < N; ++t) {
    cv[t] = _mm512_loadu_ps(c + 16 * t);
    sv[t] = _mm512_loadu_ps(s + 16 * t);
  }
  cv[N] = _mm512_maskz_loadu_ps(tail, c + 16 * N);
  sv[N] = _mm512_maskz_loadu_ps(tail, s + 16 * N);
  const std::int64_t dim = p.head_dim;  // a local: stores through x could alias p for all GCC knows
  const Rows<S> parts[2] = {q, k};
  for (const Rows<S>& part : parts) {
    for (std::int64_t h = 0; h < part.heads; ++h) {
      auto* x = part.rows + h * dim + 16 * first;
#pragma GCC unroll 8
      for (int t = 0; t < N; ++t) S::store(x + 16 * t, rotate_pairs(S::load(x + 16 * t), cv[t], sv[t]));
      if (tail != 0) S::store(x + 16 * N, rotate_pairs(S::load(x + 16 * N, tail), cv[N], sv[N]), tail);
    }
  }
}

// Half-split layout: pairs [16 first, 16 (first + N)) (features i and i + rotary_dim/2) of
// every head, plus `tail` lanes of the tile after them. y1 = x1 c - x2 s, y2 = x2 c + x1 s.
template <typename S, int N, typename Args>
void rotate_half_split_chunk(const Args& p, Rows<S> q, Rows<S> k, int first, __mmask16 tail) {
  const int half = p.rotary_dim / 2;
  const float* c = p.table + 16 * first;
  const float* s = p.table + p.rotary_dim + 16 * first;
  __m512 cv[N + 1], sv[N + 1];
#pragma GCC unroll 8
  for (int t = 0; t < N; ++t) {
    cv[t] = _mm512_loadu_ps(c + 16 * t);
    sv[t] = _mm512_loadu_ps(s + 16 * t);
  }
  cv[N] = _mm512_maskz_loadu_ps(tail, c + 16 * N);
  sv[N] = _mm512_maskz_loadu_ps(tail, s + 16 * N);
  const auto rotate = [](auto* x1p, auto* x2p, __m512 x1, __m512 x2, __m512 cw, __m512 sw,
                         auto store) {
    store(x1p, _mm512_fnmadd_ps(x2, sw, _mm512_mul_ps(x1, cw)));
    store(x2p, _mm512_fmadd_ps(x1, sw, _mm512_mul_ps(x2, cw)));
  };
  const std::int64_t dim = p.head_dim;  // a local: stores through x could alias p for all GCC knows
  const Rows<S> parts[2] = {q, k};
  for (const Rows<S>& part : parts) {
    for (std::int64_t h = 0; h < part.heads; ++h) {
      auto* x1 = part.rows + h * dim + 16 * first;
      auto* x2 = x1 + half;
#pragma GCC unroll 8
      for (int t = 0; t < N; ++t) {
        rotate(x1 + 16 * t, x2 + 16 * t, S::load(x1 + 16 * t), S::load(x2 + 16 * t), cv[t], sv[t],
               [](auto* at, __m512 v) { S::store(at, v); });
      }
      if (tail != 0) {
        rotate(x1 + 16 * N, x2 + 16 * N, S::load(x1 + 16 * N, tail), S::load(x2 + 16 * N, tail),
               cv[N], sv[N], [tail](auto* at, __m512 v) { S::store(at, v, tail); });
      }
    }
  }
}

// Every q head, then every k head, of one token (each consecutive rows of head_dim): `features`
// rotary features (interleaved) or pairs (half-split), chunk by chunk, q and k under one load of
// the chunk's cos/sin (GPT-2's 8 + 8 heads of 64 took a fifth of their time reloading it).
// fp32 and fp16, 16 features a tile; bf16 has its overload in rope_kernel_avx512_bf16.h.
template <typename S, typename Args>
void rotate_heads(const Args& p, Rows<S> q, Rows<S> k) {
  const int features = p.interleaved ? p.rotary_dim : p.rotary_dim / 2;
  const int tiles = features / 16;
  int first = 0;
  for (; tiles - first > kChunkTiles; first += kChunkTiles) {
    p.interleaved ? rotate_interleaved_chunk<S, kChunkTiles>(p, q, k, first, 0)
                  : rotate_half_split_chunk<S, kChunkTiles>(p, q, k, first, 0);
  }
  const __mmask16 tail = mask16(features % 16);
  with_tile_count<kChunkTiles>(tiles - first, [&](auto count) {
    constexpr int n = decltype(count)::value;
    p.interleaved ? rotate_interleaved_chunk<S, n>(p, q, k, first, tail)
                  : rotate_half_split_chunk<S, n>(p, q, k, first, tail);
  });
}

// rope_kernel.h's round_trip_*: S's widening and narrowing alone, four vectors a step as the
// probe walks, the remainder masked. (The asm keeps the compiler from pairing the two away.)
template <typename S>
void round_trip(typename S::Element* x, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
#pragma GCC unroll 4
    for (int t = 0; t < 4; ++t) {
      __m512 v = S::load(x + i + 16 * t);
      asm("" : "+v"(v));
      S::store(x + i + 16 * t, v);
    }
  }
  for (; i < n; i += 16) {  // fewer than 64 left: mask16 takes the count as it is
    const __mmask16 lanes = mask16(static_cast<int>(n - i));
    __m512 v = S::load(x + i, lanes);
    asm("" : "+v"(v));
    S::store(x + i, v, lanes);
  }
}

// rope_kernel.h's rotation_alone_* on fp32 and fp16: the rotation with cos and sin in registers,
// 32 elements (two registers) a block; the remainder is only converted.
template <typename S>
void rotation_alone(typename S::Element* x, std::int64_t n, bool interleaved) {
  const __m512 c = _mm512_set1_ps(kAloneCos), s = _mm512_set1_ps(kAloneSin);
  const __m512 s_signed = _mm512_mask_sub_ps(s, static_cast<__mmask16>(0x5555), _mm512_setzero_ps(), s);
  const auto rotate_pairs = [&](__m512 v) {
    return _mm512_fmadd_ps(_mm512_permute_ps(v, 0xB1), s_signed, _mm512_mul_ps(v, c));
  };
  std::int64_t i = 0;
  if (interleaved) {
    for (; i + 32 <= n; i += 32) {
      const __m512 y0 = rotate_pairs(S::load(x + i)), y1 = rotate_pairs(S::load(x + i + 16));
      S::store(x + i, y0);
      S::store(x + i + 16, y1);
    }
  } else {
    for (; i + 32 <= n; i += 32) {
      const __m512 x1 = S::load(x + i), x2 = S::load(x + i + 16);
      S::store(x + i, _mm512_fnmadd_ps(x2, s, _mm512_mul_ps(x1, c)));
      S::store(x + i + 16, _mm512_fmadd_ps(x1, s, _mm512_mul_ps(x2, c)));
    }
  }
  if (i < n) round_trip<S>(x + i, n - i);
}

// rope_kernel.h's Level for run_tokens, on storage S.
template <typename S>
struct Avx512Level {
  template <typename Args>
  static void exact(const Args& p, double m) {
    const AngleState a = angle_state(p);
    sincos_of_theta(p, m, a.cos_m, a.sin_m, true);
  }
  template <typename Args>
  static void step(const Args& p) {
    const AngleState a = angle_state(p);
    sincos_of_theta(p, 1.0, a.cos_step, a.sin_step, false);
  }
  template <typename Args>
  static void advance(const Args& p) { advance_angles(p); }
  template <typename Args>
  static void rotate_token(const Args& p, typename S::Element* q, std::int64_t q_heads,
                           typename S::Element* k, std::int64_t k_heads) {
    rotate_heads(p, Rows<S>{q, q_heads}, Rows<S>{k, k_heads});
  }
};

}  // namespace
}  // namespace ropecheck::kernels
