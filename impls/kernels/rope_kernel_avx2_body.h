// The AVX2 RoPE kernel body (rope_kernel.h's algorithm), templated on how q and k are stored
// (fp32, fp16 by F16C, bf16 by integer rounding): the level's angle steps, storage policies, pair
// rotation and Avx2Level for run_tokens. rope_kernel_avx2.cc makes the kernel of it, and the fused
// RoPE + KV-cache kernel (fused_cache_avx2.cc) rotates with the same code. Include it ONLY from
// files compiled with the AVX2 level's flags (-mavx2 -mfma -mf16c); everything here has internal
// linkage, so each such file gets its own copy.
#pragma once

#include <immintrin.h>
#include <sleef.h>

#include <cstdint>
#include <cstring>

#include "impls/kernels/rope_kernel.h"

namespace ropecheck::kernels {
namespace {

// Lanes [0, remaining) set: compare the lane index with the count.
__m256i mask8(int remaining) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(remaining), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

__m256i mask4_pd(int remaining) {
  return _mm256_cmpgt_epi64(_mm256_set1_epi64x(remaining), _mm256_setr_epi64x(0, 1, 2, 3));
}

// The angle tables' loads and stores: plain for a full vector, vmaskmov only for the remainder.
// A vmaskmov store costs many times a plain one on AMD cores, and the per-token table update
// (advance_angles + emit_table) made 4 of them per 4 angles: on llama7b's 64 angles, 64 masked
// stores a token beside the 1024 plain stores of its 64 heads (bench/README.md).
__m256d load4d(const double* at, int remaining) {
  return remaining >= 4 ? _mm256_loadu_pd(at) : _mm256_maskload_pd(at, mask4_pd(remaining));
}
void store4d(double* at, __m256d v, int remaining) {
  if (remaining >= 4) {
    _mm256_storeu_pd(at, v);
  } else {
    _mm256_maskstore_pd(at, mask4_pd(remaining), v);
  }
}

// cos/sin of scale * theta_i into (cos_out, sin_out), 4 doubles a vector (the last masked).
template <typename Args>
void sincos_of_theta(const Args& p, double scale, double* cos_out, double* sin_out) {
  const int half = p.rotary_dim / 2;
  const __m256d factor = _mm256_set1_pd(scale);
  for (int i = 0; i < half; i += 4) {
    const __m256d angle = _mm256_mul_pd(factor, load4d(p.theta + i, half - i));
    const Sleef___m256d_2 sc = Sleef_sincosd4_u35avx2(angle);
    store4d(sin_out + i, sc.x, half - i);
    store4d(cos_out + i, sc.y, half - i);
  }
}

template <typename Args>
void advance_angles(const Args& p) {
  const AngleState a = angle_state(p);
  const int half = p.rotary_dim / 2;
  for (int i = 0; i < half; i += 4) {
    const int n = half - i;
    const __m256d c = load4d(a.cos_m + i, n), s = load4d(a.sin_m + i, n);
    const __m256d cs = load4d(a.cos_step + i, n), ss = load4d(a.sin_step + i, n);
    store4d(a.cos_m + i, _mm256_fmsub_pd(c, cs, _mm256_mul_pd(s, ss)), n);
    store4d(a.sin_m + i, _mm256_fmadd_pd(s, cs, _mm256_mul_pd(c, ss)), n);
  }
}

// The AngleState rounded to fp32 into the table layout of rope_kernel.h.
template <typename Args>
void emit_table(const Args& p) {
  const AngleState a = angle_state(p);
  const int half = p.rotary_dim / 2;
  float* cos_table = p.table;
  float* sin_table = p.table + p.rotary_dim;
  const __m256i duplicate = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
  const __m256 even_negative = _mm256_setr_ps(-1, 1, -1, 1, -1, 1, -1, 1);
  const __m256d scale = _mm256_set1_pd(p.cos_sin_scale);
  for (int i = 0; i < half; i += 4) {
    const int n = half - i;
    const __m128 c = _mm256_cvtpd_ps(_mm256_mul_pd(load4d(a.cos_m + i, n), scale));
    const __m128 s = _mm256_cvtpd_ps(_mm256_mul_pd(load4d(a.sin_m + i, n), scale));
    if (p.interleaved) {
      const __m256 c2 = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(c), duplicate);
      const __m256 s2 = _mm256_mul_ps(_mm256_permutevar8x32_ps(_mm256_castps128_ps256(s), duplicate),
                                      even_negative);  // exact: a sign flip
      if (n >= 4) {
        _mm256_storeu_ps(cos_table + 2 * i, c2);
        _mm256_storeu_ps(sin_table + 2 * i, s2);
      } else {
        const __m256i lanes = mask8(2 * n);
        _mm256_maskstore_ps(cos_table + 2 * i, lanes, c2);
        _mm256_maskstore_ps(sin_table + 2 * i, lanes, s2);
      }
    } else if (n >= 4) {
      _mm_storeu_ps(cos_table + i, c);
      _mm_storeu_ps(sin_table + i, s);
    } else {
      const __m128i lanes = _mm256_castsi256_si128(mask8(n));
      _mm_maskstore_ps(cos_table + i, lanes, c);
      _mm_maskstore_ps(sin_table + i, lanes, s);
    }
  }
}

// x in a register: GCC otherwise folds the load of x into both instructions that read it (the
// multiply and the pair swap), two loads of x per vector. The loads, not the arithmetic, bound
// these loops on Zen 3 (llvm-mca's model: 2.6 cycles a vector with the extra load, 2.1 without,
// the same-run probe's 1.1; bench/README.md); on Intel cores the extra load costs less.
inline __m256 in_register(__m256 v) {
  asm("" : "+x"(v));
  return v;
}

// How q and k are stored: fp32 as is, fp16 and bf16 widened on load (exact) and rounded to
// nearest even on store. load/store take 8 elements, store2 16 (two vectors, the first at x);
// the _first forms the first n < 8 (the rest read as 0).
struct Fp32Storage {
  using Element = float;
  static __m256 load(const float* x) { return in_register(_mm256_loadu_ps(x)); }
  static void store(float* x, __m256 v) { _mm256_storeu_ps(x, v); }
  static void store2(float* x, __m256 a, __m256 b) {
    store(x, a);
    store(x + 8, b);
  }
  static __m256 load_first(const float* x, int n) { return _mm256_maskload_ps(x, mask8(n)); }
  static void store_first(float* x, __m256 v, int n) { _mm256_maskstore_ps(x, mask8(n), v); }
};

// 16-bit elements have no AVX2 masked load or store: their remainder goes through an 8-element
// stack buffer, with Storage's own load and store.
template <typename Storage, typename Element>
struct BufferedRemainder {
  static __m256 load_first(const Element* x, int n) {
    Element buffer[8] = {};
    std::memcpy(buffer, x, sizeof(Element) * static_cast<unsigned>(n));
    return Storage::load(buffer);
  }
  static void store_first(Element* x, __m256 v, int n) {
    Element buffer[8];
    Storage::store(buffer, v);
    std::memcpy(x, buffer, sizeof(Element) * static_cast<unsigned>(n));
  }
};

struct Fp16Storage : BufferedRemainder<Fp16Storage, Fp16> {
  using Element = Fp16;
  static constexpr int kRounding = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  static __m256 load(const Fp16* x) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x)));
  }
  static void store(Fp16* x, __m256 v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(x), _mm256_cvtps_ph(v, kRounding));
  }
  static void store2(Fp16* x, __m256 a, __m256 b) {
    store(x, a);
    store(x + 8, b);
  }
};

// bf16 is the top half of an fp32: widening is a 16-bit shift, exact. Narrowing rounds to nearest
// even with integer ops, as storage.h's bf16_from_float: add 0x7FFF plus the kept part's lowest
// bit, keep the top half; a NaN keeps its top half with the quiet bit set (the carry could
// otherwise turn it into Inf).
struct Bf16Storage : BufferedRemainder<Bf16Storage, std::uint16_t> {
  using Element = std::uint16_t;
  static __m256 load(const std::uint16_t* x) {
    const __m128i half = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(half), 16));
  }
  static void store(std::uint16_t* x, __m256 v) {
    const __m256i top = rounded_top(v);
    // Eight 32-bit lanes holding 16-bit values into eight 16-bit lanes (no saturation happens).
    const __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(top), _mm256_extracti128_si256(top, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(x), packed);
  }
  // Two vectors' narrowing packed at once: one in-lane pack and one qword permute for 16
  // elements, where store() takes an extract and a pack for 8 (all on the shuffle unit).
  static void store2(std::uint16_t* x, __m256 a, __m256 b) {
    // packus interleaves by 128-bit lane: [a0-3 b0-3 | a4-7 b4-7]; 0xD8 puts a's halves first.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(rounded_top(a), rounded_top(b)), 0xD8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(x), packed);
  }

 private:
  // Each lane's bf16 (its value rounded to nearest even, a NaN quiet) in the lane's low 16 bits.
  static __m256i rounded_top(__m256 v) {
    const __m256i bits = _mm256_castps_si256(v);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_add_epi32(bits, _mm256_add_epi32(_mm256_set1_epi32(0x7FFF), lsb));
    const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    const __m256i quiet = _mm256_or_si256(bits, _mm256_set1_epi32(0x00400000));
    return _mm256_srli_epi32(_mm256_blendv_epi8(rounded, quiet, nan), 16);
  }
};

inline __m256 rotate_pairs(__m256 v, __m256 c, __m256 s) {
  const __m256 swapped = _mm256_permute_ps(v, 0xB1);  // (x0 x1 x2 x3) -> (x1 x0 x3 x2)
  return _mm256_fmadd_ps(swapped, s, _mm256_mul_ps(v, c));
}

// One token's rows as the prefill walk reads them, in locals: a store through x may alias p (an
// __m256 or __m128i store may alias anything), which made the compiler reload p.rotary_dim
// after every vector (a fourth load a vector beside x, cos and sin, where the loads bound the
// loop).
struct RowWalk {
  const float* c;
  const float* s;
  int rotary;
  std::int64_t dim;
};

template <typename Args>
RowWalk row_walk(const Args& p) {
  return {p.table, p.table + p.rotary_dim, p.rotary_dim, p.head_dim};
}

// Head after head, each row in address order (the walk the hardware prefetchers follow out of
// cache), two vectors a step; full vectors with plain loads and stores (vmaskmov stores are slow
// on AMD cores), the remainder masked. kRotary > 0: the rotary width known when compiled (see
// rotate_prefill), 0: w.rotary's. The unroll pragma writes a fixed width's steps out whole; it
// takes no count that depends on kRotary, so the general loop is unrolled by 8 as well. The same
// steps written out by a fold over an index sequence, the general loop left alone, ran fp16 in
// cache 12-22% slower (the gate, 10 rounds).
template <typename S, int kRotary>
void rotate_interleaved(RowWalk w, typename S::Element* rows, std::int64_t heads) {
  const int rotary = kRotary > 0 ? kRotary : w.rotary;
  for (std::int64_t h = 0; h < heads; ++h) {
    typename S::Element* x = rows + h * w.dim;
    int j = 0;
#pragma GCC unroll 8
    for (; j + 16 <= rotary; j += 16) {
      const __m256 y0 = rotate_pairs(S::load(x + j), _mm256_loadu_ps(w.c + j), _mm256_loadu_ps(w.s + j));
      const __m256 y1 = rotate_pairs(S::load(x + j + 8), _mm256_loadu_ps(w.c + j + 8), _mm256_loadu_ps(w.s + j + 8));
      S::store2(x + j, y0, y1);
    }
    if (j + 8 <= rotary) {
      S::store(x + j, rotate_pairs(S::load(x + j), _mm256_loadu_ps(w.c + j), _mm256_loadu_ps(w.s + j)));
      j += 8;
    }
    if (j < rotary) {
      const int n = rotary - j;
      const __m256i lanes = mask8(n);
      S::store_first(x + j,
                     rotate_pairs(S::load_first(x + j, n), _mm256_maskload_ps(w.c + j, lanes),
                                  _mm256_maskload_ps(w.s + j, lanes)),
                     n);
    }
  }
}

template <typename S, int kRotary>
void rotate_half_split(RowWalk w, typename S::Element* rows, std::int64_t heads) {
  const int half = (kRotary > 0 ? kRotary : w.rotary) / 2;
  const auto rotate = [](__m256 x1, __m256 x2, __m256 c, __m256 s, __m256& y1, __m256& y2) {
    y1 = _mm256_fnmadd_ps(x2, s, _mm256_mul_ps(x1, c));
    y2 = _mm256_fmadd_ps(x1, s, _mm256_mul_ps(x2, c));
  };
  for (std::int64_t h = 0; h < heads; ++h) {
    typename S::Element* x = rows + h * w.dim;
    int i = 0;
#pragma GCC unroll 8
    for (; i + 8 <= half; i += 8) {
      __m256 y1, y2;
      // cos and sin each feed two instructions: in registers, not loaded into both (x likewise).
      rotate(S::load(x + i), S::load(x + half + i), in_register(_mm256_loadu_ps(w.c + i)),
             in_register(_mm256_loadu_ps(w.s + i)), y1, y2);
      S::store(x + i, y1);
      S::store(x + half + i, y2);
    }
    if (i < half) {
      const int n = half - i;
      const __m256i lanes = mask8(n);
      __m256 y1, y2;
      rotate(S::load_first(x + i, n), S::load_first(x + half + i, n), _mm256_maskload_ps(w.c + i, lanes),
             _mm256_maskload_ps(w.s + i, lanes), y1, y2);
      S::store_first(x + i, y1, n);
      S::store_first(x + half + i, y2, n);
    }
  }
}

// The prefill walk of one token's heads. GPT-2's 64-wide heads are four steps of the interleaved
// loop: counting them and checking for a remainder at run time took 0.75-0.78 of a bare loop's
// speed where the same loop with the width known reached 0.81-0.83 (fp16, in cache, a Xeon;
// bench/README.md). The widths most models rotate, 64 and 128, get a loop of their own.
template <typename S>
void rotate_prefill(RowWalk w, typename S::Element* rows, std::int64_t heads, bool interleaved) {
  switch (w.rotary) {
    case 64:
      return interleaved ? rotate_interleaved<S, 64>(w, rows, heads) : rotate_half_split<S, 64>(w, rows, heads);
    case 128:
      return interleaved ? rotate_interleaved<S, 128>(w, rows, heads) : rotate_half_split<S, 128>(w, rows, heads);
    default:
      return interleaved ? rotate_interleaved<S, 0>(w, rows, heads) : rotate_half_split<S, 0>(w, rows, heads);
  }
}

// A single-token call (decode): all heads of the token at once, column block outermost and heads
// inside, so that the block's cos and sin vectors are loaded once and stay in registers while
// every head's block is rotated: a vector of x costs one load and one store, as the same-run
// probe's does, instead of three loads (x, cos, sin) and a store. Each element sees the same
// operations as in the row-by-row form. Only for one token: on prefill the strided walk across
// heads cost far more than the table loads it saves (out of cache 0.44 against 0.74 of the probe,
// fp32 interleaved, llama7b_prefill4096; bench/README.md). Bounds are locals: a store through x
// may alias p (an __m256 or __m128i store may alias anything), which would make the compiler
// reload p's fields every iteration.
template <typename S, typename Args>
void rotate_interleaved_heads(const Args& p, typename S::Element* rows, std::int64_t heads) {
  const float* c = p.table;
  const float* s = p.table + p.rotary_dim;
  const int rotary = p.rotary_dim;
  const std::int64_t stride = p.head_dim;
  int j = 0;
  // Four vectors a head (two cache lines of fp32), then two, then one: the strided walk waits on
  // a line per head, and independent rotations per head hide more of that wait (Zen 4, decode:
  // one vector 0.41-0.45 of the probe, two 0.63-0.66, four 8% less time again; bench/README.md).
  for (; j + 32 <= rotary; j += 32) {
    const __m256 c0 = _mm256_loadu_ps(c + j), s0 = _mm256_loadu_ps(s + j);
    const __m256 c1 = _mm256_loadu_ps(c + j + 8), s1 = _mm256_loadu_ps(s + j + 8);
    const __m256 c2 = _mm256_loadu_ps(c + j + 16), s2 = _mm256_loadu_ps(s + j + 16);
    const __m256 c3 = _mm256_loadu_ps(c + j + 24), s3 = _mm256_loadu_ps(s + j + 24);
    typename S::Element* x = rows + j;
    for (std::int64_t h = 0; h < heads; ++h, x += stride) {
      const __m256 y0 = rotate_pairs(S::load(x), c0, s0), y1 = rotate_pairs(S::load(x + 8), c1, s1);
      const __m256 y2 = rotate_pairs(S::load(x + 16), c2, s2), y3 = rotate_pairs(S::load(x + 24), c3, s3);
      S::store2(x, y0, y1);
      S::store2(x + 16, y2, y3);
    }
  }
  for (; j + 16 <= rotary; j += 16) {
    const __m256 c0 = _mm256_loadu_ps(c + j), s0 = _mm256_loadu_ps(s + j);
    const __m256 c1 = _mm256_loadu_ps(c + j + 8), s1 = _mm256_loadu_ps(s + j + 8);
    typename S::Element* x = rows + j;
    for (std::int64_t h = 0; h < heads; ++h, x += stride) {
      const __m256 y0 = rotate_pairs(S::load(x), c0, s0), y1 = rotate_pairs(S::load(x + 8), c1, s1);
      S::store2(x, y0, y1);
    }
  }
  for (; j + 8 <= rotary; j += 8) {
    const __m256 cj = _mm256_loadu_ps(c + j), sj = _mm256_loadu_ps(s + j);
    typename S::Element* x = rows + j;
    for (std::int64_t h = 0; h < heads; ++h, x += stride) S::store(x, rotate_pairs(S::load(x), cj, sj));
  }
  if (j < rotary) {
    const int n = rotary - j;
    const __m256i lanes = mask8(n);
    const __m256 cj = _mm256_maskload_ps(c + j, lanes), sj = _mm256_maskload_ps(s + j, lanes);
    typename S::Element* x = rows + j;
    for (std::int64_t h = 0; h < heads; ++h, x += stride) {
      S::store_first(x, rotate_pairs(S::load_first(x, n), cj, sj), n);
    }
  }
}

// The same for the half-split layout (pairs x_i, x_{i + rotary_dim/2}).
template <typename S, typename Args>
void rotate_half_split_heads(const Args& p, typename S::Element* rows, std::int64_t heads) {
  const int half = p.rotary_dim / 2;
  const float* c = p.table;
  const float* s = p.table + p.rotary_dim;
  const std::int64_t stride = p.head_dim;
  const auto rotate = [](typename S::Element* x, int half, __m256 cv, __m256 sv) {
    const __m256 x1 = S::load(x), x2 = S::load(x + half);
    S::store(x, _mm256_fnmadd_ps(x2, sv, _mm256_mul_ps(x1, cv)));
    S::store(x + half, _mm256_fmadd_ps(x1, sv, _mm256_mul_ps(x2, cv)));
  };
  int i = 0;
  // Two column blocks a head (a whole line of fp32 in each half), as the interleaved form takes
  // several: the strided walk waits on a line per head, and more independent rotations per
  // head hide more of that wait.
  for (; i + 16 <= half; i += 16) {
    const __m256 c0 = _mm256_loadu_ps(c + i), s0 = _mm256_loadu_ps(s + i);
    const __m256 c1 = _mm256_loadu_ps(c + i + 8), s1 = _mm256_loadu_ps(s + i + 8);
    typename S::Element* x = rows + i;
    for (std::int64_t h = 0; h < heads; ++h, x += stride) {
      rotate(x, half, c0, s0);
      rotate(x + 8, half, c1, s1);
    }
  }
  for (; i + 8 <= half; i += 8) {
    const __m256 cv = _mm256_loadu_ps(c + i), sv = _mm256_loadu_ps(s + i);
    typename S::Element* x = rows + i;
    for (std::int64_t h = 0; h < heads; ++h, x += stride) rotate(x, half, cv, sv);
  }
  if (i < half) {
    const int n = half - i;
    const __m256i lanes = mask8(n);
    const __m256 cv = _mm256_maskload_ps(c + i, lanes), sv = _mm256_maskload_ps(s + i, lanes);
    typename S::Element* x = rows + i;
    for (std::int64_t h = 0; h < heads; ++h, x += stride) {
      const __m256 x1 = S::load_first(x, n), x2 = S::load_first(x + half, n);
      S::store_first(x, _mm256_fnmadd_ps(x2, sv, _mm256_mul_ps(x1, cv)), n);
      S::store_first(x + half, _mm256_fmadd_ps(x1, sv, _mm256_mul_ps(x2, cv)), n);
    }
  }
}

template <typename S>
struct Avx2Level {
  template <typename Args>
  static void exact(const Args& p, double m) {
    const AngleState a = angle_state(p);
    sincos_of_theta(p, m, a.cos_m, a.sin_m);
    emit_table(p);
  }
  template <typename Args>
  static void step(const Args& p) {
    const AngleState a = angle_state(p);
    sincos_of_theta(p, 1.0, a.cos_step, a.sin_step);
  }
  template <typename Args>
  static void advance(const Args& p) {
    advance_angles(p);
    emit_table(p);
  }
  template <typename Args>
  static void rotate(const Args& p, typename S::Element* rows, std::int64_t heads) {
    if (p.tokens == 1) {  // decode: the table once per column block (rotate_interleaved_heads)
      p.interleaved ? rotate_interleaved_heads<S>(p, rows, heads) : rotate_half_split_heads<S>(p, rows, heads);
      return;
    }
    rotate_prefill<S>(row_walk(p), rows, heads, p.interleaved);
  }
};

}  // namespace
}  // namespace ropecheck::kernels
