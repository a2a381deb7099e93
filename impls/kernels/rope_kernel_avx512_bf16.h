// The AVX-512 RoPE kernel's rotations on bf16 q and k, two values a 32-bit lane. Include it ONLY
// from files compiled with AVX-512 flags (internal linkage, as rope_kernel_avx512_body.h).
//
// Why two a lane: bf16 is the top half of an fp32, so a 32-bit lane holding features (2j, 2j+1)
// widens to fp32 with one shift (the low one) and one AND (the high one), no shuffle; and in the
// interleaved layout those two are exactly a rotation pair, so the pair swap the fp32 kernel
// needs disappears too. A 512-bit load brings 32 features; the results go back as one 512-bit
// store. Per 32 features: 2 widening ops, 4 FMA-unit ops and the narrowing, where 16 at a time
// (vpmovzxwd, shift, pair swap, 2 FMA-unit ops, narrow; twice) took twice the operations. Zen 4,
// bare loops over 1.5 MiB in cache, against the probe over the same bytes: interleaved 0.30 ->
// 0.51, half-split 0.34 -> 0.52 with vcvtneps2bf16; the integer rounding 0.17 -> 0.23.
// The arithmetic is the fp32 kernel's, operation for operation (the same products and FMAs), so
// the stored bits are those of widening 16 at a time.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "impls/kernels/rope_kernel.h"
#include "impls/kernels/rope_kernel_avx512_tiles.h"

namespace ropecheck::kernels {
namespace {

// Storage policy: bf16, rounded by Narrow (below, or vcvtne2ps2bf16 in the AVX512_BF16 file).
template <typename Narrow>
struct Bf16Lanes {
  using Element = std::uint16_t;
};

// The low and high bf16 of each 32-bit lane as fp32 (exact).
inline __m512 low_halves(__m512i v) { return _mm512_castsi512_ps(_mm512_slli_epi32(v, 16)); }
inline __m512 high_halves(__m512i v) {
  return _mm512_castsi512_ps(_mm512_and_si512(v, _mm512_set1_epi32(static_cast<int>(0xFFFF0000u))));
}

// Round to nearest even with integer ops (any AVX-512 CPU), as storage.h's bf16_from_float:
// add 0x7FFF plus the kept part's lowest bit; the result is the top half. A NaN keeps its top
// half with the quiet bit set (the carry could otherwise turn it into Inf).
inline __m512i rounded_to_top_half(__m512 v) {
  const __m512i bits = _mm512_castps_si512(v);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_add_epi32(bits, _mm512_add_epi32(_mm512_set1_epi32(0x7FFF), lsb));
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  return _mm512_mask_or_epi32(rounded, nan, bits, _mm512_set1_epi32(0x00400000));
}

struct IntegerRoundingBf16 {
  // 32 bf16: feature 2j is low_j rounded, feature 2j + 1 high_j rounded.
  static __m512i narrow_pairs(__m512 low, __m512 high) {
    // (high's top half) | (low's top half >> 16): 0xEA is (A & B) | C.
    return _mm512_ternarylogic_epi32(rounded_to_top_half(high),
                                     _mm512_set1_epi32(static_cast<int>(0xFFFF0000u)),
                                     _mm512_srli_epi32(rounded_to_top_half(low), 16), 0xEA);
  }
};

inline __m512i load_lanes(const std::uint16_t* x) { return _mm512_loadu_si512(x); }
inline __m512i load_lanes(const std::uint16_t* x, __mmask32 features) {
  return _mm512_maskz_loadu_epi16(features, x);
}
inline void store_lanes(std::uint16_t* x, __m512i v) { _mm512_storeu_si512(x, v); }
inline void store_lanes(std::uint16_t* x, __m512i v, __mmask32 features) {
  _mm512_mask_storeu_epi16(x, features, v);
}

// Lanes [0, 16) of `from`: even (0, 2, ..., 30) or odd (1, 3, ..., 31) floats of the 32 at
// `at`, the first `count` of them there (the rest read as zero).
inline __m512 every_other(const float* at, int count, bool odd) {
  const __m512i even_index = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i index = odd ? _mm512_add_epi32(even_index, _mm512_set1_epi32(1)) : even_index;
  const __m512 first = count >= 16 ? _mm512_loadu_ps(at) : _mm512_maskz_loadu_ps(mask16(count), at);
  const __m512 second = count >= 32 ? _mm512_loadu_ps(at + 16) : _mm512_maskz_loadu_ps(mask16(count - 16), at + 16);
  return _mm512_permutex2var_ps(first, index, second);
}

// Interleaved: features [32 first, 32 (first + N)) of every head, plus the first `tail` features
// (even) of the tile after them. Lane j of a tile holds pair j: y_2j = x_2j c - x_2j+1 s,
// y_2j+1 = x_2j+1 c + x_2j s, with c and s each pair's (the table's cos_dup even entries, and
// sin_signed's odd ones, which are +s).
template <typename Narrow, int N, typename Args>
void rotate_bf16_interleaved_chunk(const Args& p, Rows<Bf16Lanes<Narrow>> q, Rows<Bf16Lanes<Narrow>> k,
                                   int first, int tail) {
  const float* c = p.table + 32 * first;
  const float* s = p.table + p.rotary_dim + 32 * first;
  __m512 cv[N + 1], sv[N + 1];
#pragma GCC unroll 8
  for (int t = 0; t <= N; ++t) {
    const int count = t < N ? 32 : tail;
    cv[t] = every_other(c + 32 * t, count, false);
    sv[t] = every_other(s + 32 * t, count, true);
  }
  const __mmask32 tail_features = mask32(tail);
  const auto rotate = [](__m512i x, __m512 cw, __m512 sw) {
    const __m512 even = low_halves(x), odd = high_halves(x);
    return Narrow::narrow_pairs(_mm512_fnmadd_ps(odd, sw, _mm512_mul_ps(even, cw)),
                                _mm512_fmadd_ps(even, sw, _mm512_mul_ps(odd, cw)));
  };
  const std::int64_t dim = p.head_dim;  // a local: stores through x could alias p for all GCC knows
  const Rows<Bf16Lanes<Narrow>> parts[2] = {q, k};
  for (const Rows<Bf16Lanes<Narrow>>& part : parts) {
    for (std::int64_t h = 0; h < part.heads; ++h) {
      std::uint16_t* x = part.rows + h * dim + 32 * first;
#pragma GCC unroll 8
      for (int t = 0; t < N; ++t) store_lanes(x + 32 * t, rotate(load_lanes(x + 32 * t), cv[t], sv[t]));
      if (tail != 0) {
        store_lanes(x + 32 * N, rotate(load_lanes(x + 32 * N, tail_features), cv[N], sv[N]), tail_features);
      }
    }
  }
}

// Half-split: pairs [32 first, 32 (first + N)) (features i and i + rotary_dim/2) of every head,
// plus the first `tail` pairs of the tile after them. Each lane holds two neighbouring features
// of a half, each rotated with its partner in the other half's same lane:
// y1 = x1 c - x2 s, y2 = x2 c + x1 s, with the cos/sin of the low and the high features.
template <typename Narrow, int N, typename Args>
void rotate_bf16_half_split_chunk(const Args& p, Rows<Bf16Lanes<Narrow>> q, Rows<Bf16Lanes<Narrow>> k,
                                  int first, int tail) {
  const int half = p.rotary_dim / 2;
  const float* c = p.table + 32 * first;
  const float* s = p.table + p.rotary_dim + 32 * first;
  __m512 c_low[N + 1], c_high[N + 1], s_low[N + 1], s_high[N + 1];
#pragma GCC unroll 8
  for (int t = 0; t <= N; ++t) {
    const int count = t < N ? 32 : tail;
    c_low[t] = every_other(c + 32 * t, count, false);
    c_high[t] = every_other(c + 32 * t, count, true);
    s_low[t] = every_other(s + 32 * t, count, false);
    s_high[t] = every_other(s + 32 * t, count, true);
  }
  const __mmask32 tail_features = mask32(tail);
  const auto rotate = [](__m512i x1, __m512i x2, __m512 cl, __m512 ch, __m512 sl, __m512 sh,
                         auto store) {
    const __m512 x1l = low_halves(x1), x1h = high_halves(x1);
    const __m512 x2l = low_halves(x2), x2h = high_halves(x2);
    store(0, Narrow::narrow_pairs(_mm512_fnmadd_ps(x2l, sl, _mm512_mul_ps(x1l, cl)),
                                  _mm512_fnmadd_ps(x2h, sh, _mm512_mul_ps(x1h, ch))));
    store(1, Narrow::narrow_pairs(_mm512_fmadd_ps(x1l, sl, _mm512_mul_ps(x2l, cl)),
                                  _mm512_fmadd_ps(x1h, sh, _mm512_mul_ps(x2h, ch))));
  };
  const std::int64_t dim = p.head_dim;  // a local: stores through x could alias p for all GCC knows
  const Rows<Bf16Lanes<Narrow>> parts[2] = {q, k};
  for (const Rows<Bf16Lanes<Narrow>>& part : parts) {
    for (std::int64_t h = 0; h < part.heads; ++h) {
      std::uint16_t* x1 = part.rows + h * dim + 32 * first;
      std::uint16_t* x2 = x1 + half;
#pragma GCC unroll 4
      for (int t = 0; t < N; ++t) {
        std::uint16_t* at[2] = {x1 + 32 * t, x2 + 32 * t};
        rotate(load_lanes(at[0]), load_lanes(at[1]), c_low[t], c_high[t], s_low[t], s_high[t],
               [&](int which, __m512i v) { store_lanes(at[which], v); });
      }
      if (tail != 0) {
        std::uint16_t* at[2] = {x1 + 32 * N, x2 + 32 * N};
        rotate(load_lanes(at[0], tail_features), load_lanes(at[1], tail_features), c_low[N], c_high[N],
               s_low[N], s_high[N], [&](int which, __m512i v) { store_lanes(at[which], v, tail_features); });
      }
    }
  }
}

// Every q head, then every k head, of one token, chunk by chunk: the overload of
// rope_kernel_avx512_body.h's rotate_heads for bf16. Interleaved 8 tiles of 32 features a chunk (2 registers a tile),
// half-split 4 tiles of 32 pairs (4 registers a tile).
template <typename Narrow, typename Args>
void rotate_heads(const Args& p, Rows<Bf16Lanes<Narrow>> q, Rows<Bf16Lanes<Narrow>> k) {
  constexpr int kHalfSplitTiles = kChunkTiles / 2;
  const int features = p.interleaved ? p.rotary_dim : p.rotary_dim / 2;
  const int tiles = features / 32, tail = features % 32;
  int first = 0;
  if (p.interleaved) {
    for (; tiles - first > kChunkTiles; first += kChunkTiles) {
      rotate_bf16_interleaved_chunk<Narrow, kChunkTiles>(p, q, k, first, 0);
    }
    with_tile_count<kChunkTiles>(tiles - first, [&](auto count) {
      rotate_bf16_interleaved_chunk<Narrow, decltype(count)::value>(p, q, k, first, tail);
    });
  } else {
    for (; tiles - first > kHalfSplitTiles; first += kHalfSplitTiles) {
      rotate_bf16_half_split_chunk<Narrow, kHalfSplitTiles>(p, q, k, first, 0);
    }
    with_tile_count<kHalfSplitTiles>(tiles - first, [&](auto count) {
      rotate_bf16_half_split_chunk<Narrow, decltype(count)::value>(p, q, k, first, tail);
    });
  }
}

// rope_kernel.h's round_trip_bf16_*: the widening (a shift and an AND, two a lane) and Narrow's
// narrowing alone, 32 elements a vector as the rotations load them, the remainder masked.
template <typename Narrow>
void round_trip_bf16(std::uint16_t* x, std::int64_t n) {
  for (std::int64_t i = 0; i < n; i += 32) {
    const bool full = n - i >= 32;
    const __mmask32 features = mask32(static_cast<int>(full ? 32 : n - i));
    const __m512i v = full ? load_lanes(x + i) : load_lanes(x + i, features);
    __m512 low = low_halves(v), high = high_halves(v);
    asm("" : "+v"(low), "+v"(high));
    const __m512i narrowed = Narrow::narrow_pairs(low, high);
    full ? store_lanes(x + i, narrowed) : store_lanes(x + i, narrowed, features);
  }
}

// rope_kernel.h's rotation_alone_bf16_*: the rotation with cos and sin in registers, two values a
// lane as the kernel's (above), 64 elements (two registers) a block; the remainder is only
// converted. Interleaved, a lane's two values are a pair; half-split, lane j of the first register
// pairs with lane j of the second, low with low and high with high.
template <typename Narrow>
void rotation_alone_bf16(std::uint16_t* x, std::int64_t n, bool interleaved) {
  const __m512 c = _mm512_set1_ps(kAloneCos), s = _mm512_set1_ps(kAloneSin);
  const auto rotate_lane_pairs = [&](__m512i v) {
    const __m512 even = low_halves(v), odd = high_halves(v);
    return Narrow::narrow_pairs(_mm512_fnmadd_ps(odd, s, _mm512_mul_ps(even, c)),
                                _mm512_fmadd_ps(even, s, _mm512_mul_ps(odd, c)));
  };
  std::int64_t i = 0;
  if (interleaved) {
    for (; i + 64 <= n; i += 64) {
      const __m512i y0 = rotate_lane_pairs(load_lanes(x + i)), y1 = rotate_lane_pairs(load_lanes(x + i + 32));
      store_lanes(x + i, y0);
      store_lanes(x + i + 32, y1);
    }
  } else {
    for (; i + 64 <= n; i += 64) {
      const __m512i v1 = load_lanes(x + i), v2 = load_lanes(x + i + 32);
      const __m512 x1l = low_halves(v1), x1h = high_halves(v1), x2l = low_halves(v2), x2h = high_halves(v2);
      store_lanes(x + i, Narrow::narrow_pairs(_mm512_fnmadd_ps(x2l, s, _mm512_mul_ps(x1l, c)),
                                              _mm512_fnmadd_ps(x2h, s, _mm512_mul_ps(x1h, c))));
      store_lanes(x + i + 32, Narrow::narrow_pairs(_mm512_fmadd_ps(x1l, s, _mm512_mul_ps(x2l, c)),
                                                   _mm512_fmadd_ps(x1h, s, _mm512_mul_ps(x2h, c))));
    }
  }
  if (i < n) round_trip_bf16<Narrow>(x + i, n - i);
}

}  // namespace
}  // namespace ropecheck::kernels
