// The NEON RoPE kernel body (rope_kernel.h's algorithm) for aarch64's Advanced SIMD, templated on
// how q and k are stored (fp32; fp16 by the baseline's fcvtl/fcvtn; bf16 widened by a shift and
// narrowed by integer rounding): the level's angle steps, storage policies, pair rotation and
// NeonLevel for run_tokens. rope_kernel_neon.cc makes the kernel of it. Include it ONLY from files
// compiled with the NEON level's flags (the aarch64 baseline); everything here has internal
// linkage, so each such file gets its own copy.
//   4 floats a vector, 2 angles a SLEEF call (sincosd2_u35advsimd). NEON has no masked loads or
//   stores: every remainder of q and k goes through a 4-element stack buffer, the angles' odd one
//   through a lane; the table's last vector reads the row's slack (TableRows::row_bytes).
#pragma once

#include <arm_neon.h>
#include <sleef.h>

#include <cstdint>
#include <cstring>

#include "impls/kernels/rope_kernel.h"

namespace ropecheck::kernels {
namespace {

// Doubles [at, at + min(remaining, 2)), the rest 0; remaining <= 0 reads nothing.
inline float64x2_t load2d(const double* at, int remaining) {
  if (remaining >= 2) return vld1q_f64(at);
  return remaining == 1 ? vsetq_lane_f64(at[0], vdupq_n_f64(0.0), 0) : vdupq_n_f64(0.0);
}
inline void store2d(double* at, float64x2_t v, int remaining) {
  if (remaining >= 2) {
    vst1q_f64(at, v);
  } else if (remaining == 1) {
    vst1q_lane_f64(at, v, 0);
  }
}

// cos/sin of scale * theta_i into (cos_out, sin_out), 2 doubles a vector (an odd last one alone).
template <typename Args>
void sincos_of_theta(const Args& p, double scale, double* cos_out, double* sin_out) {
  const int half = p.rotary_dim / 2;
  const float64x2_t factor = vdupq_n_f64(scale);
  for (int i = 0; i < half; i += 2) {
    const Sleef_float64x2_t_2 sc = Sleef_sincosd2_u35advsimd(vmulq_f64(factor, load2d(p.theta + i, half - i)));
    store2d(sin_out + i, sc.x, half - i);
    store2d(cos_out + i, sc.y, half - i);
  }
}

// c' = c cos - s sin, s' = s cos + c sin: as the AVX2 level's fmsub/fmadd, the second product
// rounded and the first fused (the negation is exact).
template <typename Args>
void advance_angles(const Args& p) {
  const AngleState a = angle_state(p);
  const int half = p.rotary_dim / 2;
  for (int i = 0; i < half; i += 2) {
    const int n = half - i;
    const float64x2_t c = load2d(a.cos_m + i, n), s = load2d(a.sin_m + i, n);
    const float64x2_t cs = load2d(a.cos_step + i, n), ss = load2d(a.sin_step + i, n);
    store2d(a.cos_m + i, vfmaq_f64(vnegq_f64(vmulq_f64(s, ss)), c, cs), n);
    store2d(a.sin_m + i, vfmaq_f64(vmulq_f64(c, ss), s, cs), n);
  }
}

// (a0 b0 a1 b1) and (a2 b2 a3 b3): the interleaved row's pairs from four angles' values. The
// order of the two zip halves is the lane order of the pairs; kHalvesSwapped puts the second
// half first (mutant/neon_zip_halves_swapped: pairs 0, 1 of each four take the angles of 2, 3).
template <bool kHalvesSwapped>
inline void zip_pairs(float32x4_t a, float32x4_t b, float32x4_t& first, float32x4_t& second) {
  first = kHalvesSwapped ? vzip2q_f32(a, b) : vzip1q_f32(a, b);
  second = kHalvesSwapped ? vzip1q_f32(a, b) : vzip2q_f32(a, b);
}

// The AngleState rounded to fp32 into the table layout of rope_kernel.h, four angles a step:
// times the attention factor in double, then one rounding (fcvtn, to nearest even).
template <bool kHalvesSwapped, typename Args>
void emit_table(const Args& p) {
  const AngleState a = angle_state(p);
  const int half = p.rotary_dim / 2;
  float* cos_table = p.table;
  float* sin_table = p.table + p.rotary_dim;
  const float64x2_t scale = vdupq_n_f64(p.cos_sin_scale);
  const auto rounded = [&](const double* v, int n) {
    const float32x2_t low = vcvt_f32_f64(vmulq_f64(load2d(v, n), scale));
    return vcvt_high_f32_f64(low, vmulq_f64(load2d(v + 2, n - 2), scale));
  };
  for (int i = 0; i < half; i += 4) {
    const int n = half - i;
    const float32x4_t c = rounded(a.cos_m + i, n), s = rounded(a.sin_m + i, n);
    if (p.interleaved) {
      float32x4_t c_first, c_second, s_first, s_second;
      zip_pairs<kHalvesSwapped>(c, c, c_first, c_second);
      zip_pairs<kHalvesSwapped>(vnegq_f32(s), s, s_first, s_second);  // [-s0 s0 -s1 s1]: exact
      if (n >= 4) {
        vst1q_f32(cos_table + 2 * i, c_first);
        vst1q_f32(cos_table + 2 * i + 4, c_second);
        vst1q_f32(sin_table + 2 * i, s_first);
        vst1q_f32(sin_table + 2 * i + 4, s_second);
      } else {  // 2n < 8 floats of each: never past the row's cos (or sin) part
        float buffer[16];
        vst1q_f32(buffer, c_first);
        vst1q_f32(buffer + 4, c_second);
        vst1q_f32(buffer + 8, s_first);
        vst1q_f32(buffer + 12, s_second);
        std::memcpy(cos_table + 2 * i, buffer, sizeof(float) * 2 * static_cast<unsigned>(n));
        std::memcpy(sin_table + 2 * i, buffer + 8, sizeof(float) * 2 * static_cast<unsigned>(n));
      }
    } else if (n >= 4) {
      vst1q_f32(cos_table + i, c);
      vst1q_f32(sin_table + i, s);
    } else {
      float buffer[8];
      vst1q_f32(buffer, c);
      vst1q_f32(buffer + 4, s);
      std::memcpy(cos_table + i, buffer, sizeof(float) * static_cast<unsigned>(n));
      std::memcpy(sin_table + i, buffer + 4, sizeof(float) * static_cast<unsigned>(n));
    }
  }
}

// How q and k are stored: fp32 as is, fp16 and bf16 widened on load (exact) and rounded to
// nearest even on store. load/store take 4 elements; load2/store2 8 (two vectors, the first at x:
// one 128-bit access for 16-bit elements); the _first forms the first n < 4 through a stack
// buffer (the rest read as 0), never touching an element past them.
template <typename Storage, typename Element>
struct BufferedRemainder {
  static float32x4_t load_first(const Element* x, int n) {
    Element buffer[4] = {};
    std::memcpy(buffer, x, sizeof(Element) * static_cast<unsigned>(n));
    return Storage::load(buffer);
  }
  static void store_first(Element* x, float32x4_t v, int n) {
    Element buffer[4];
    Storage::store(buffer, v);
    std::memcpy(x, buffer, sizeof(Element) * static_cast<unsigned>(n));
  }
};

struct Fp32Storage : BufferedRemainder<Fp32Storage, float> {
  using Element = float;
  static float32x4_t load(const float* x) { return vld1q_f32(x); }
  static void store(float* x, float32x4_t v) { vst1q_f32(x, v); }
  static void load2(const float* x, float32x4_t& a, float32x4_t& b) {
    a = vld1q_f32(x);
    b = vld1q_f32(x + 4);
  }
  static void store2(float* x, float32x4_t a, float32x4_t b) {
    vst1q_f32(x, a);
    vst1q_f32(x + 4, b);
  }
};

// fcvtl / fcvtn (fp16 <-> fp32, baseline Advanced SIMD): rounding from FPCR, which Linux starts
// at round to nearest even with subnormals kept (FZ and FZ16 clear), as storage.h's
// fp16_from_float; a NaN comes out quiet with its sign and top payload bits, as there.
struct Fp16Storage : BufferedRemainder<Fp16Storage, Fp16> {
  using Element = Fp16;
  static const std::uint16_t* bits(const Fp16* x) { return &x->bits; }
  static std::uint16_t* bits(Fp16* x) { return &x->bits; }
  static float32x4_t load(const Fp16* x) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(bits(x)))); }
  static void store(Fp16* x, float32x4_t v) { vst1_u16(bits(x), vreinterpret_u16_f16(vcvt_f16_f32(v))); }
  static void load2(const Fp16* x, float32x4_t& a, float32x4_t& b) {
    const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(bits(x)));
    a = vcvt_f32_f16(vget_low_f16(h));
    b = vcvt_high_f32_f16(h);
  }
  static void store2(Fp16* x, float32x4_t a, float32x4_t b) {
    vst1q_u16(bits(x), vreinterpretq_u16_f16(vcvt_high_f16_f32(vcvt_f16_f32(a), b)));
  }
};

// bf16 is the top half of an fp32: widening is a 16-bit shift (ushll), exact. Narrowing rounds
// to nearest even with integer ops, as storage.h's bf16_from_float: add 0x7FFF plus the kept
// part's lowest bit, keep the top half; a NaN keeps its top half with the quiet bit set (the
// carry could otherwise turn it into Inf). No FEAT_BF16 needed (its bfcvt is not baseline).
struct Bf16Storage : BufferedRemainder<Bf16Storage, std::uint16_t> {
  using Element = std::uint16_t;
  static float32x4_t load(const std::uint16_t* x) { return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(x), 16)); }
  static void store(std::uint16_t* x, float32x4_t v) { vst1_u16(x, vshrn_n_u32(rounded(v), 16)); }
  static void load2(const std::uint16_t* x, float32x4_t& a, float32x4_t& b) {
    const uint16x8_t h = vld1q_u16(x);
    a = vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(h), 16));
    b = vreinterpretq_f32_u32(vshll_high_n_u16(h, 16));
  }
  static void store2(std::uint16_t* x, float32x4_t a, float32x4_t b) {
    // The top 16 bits of each 32-bit lane are its odd 16-bit lane (little-endian): one uzp2.
    vst1q_u16(x, vuzp2q_u16(vreinterpretq_u16_u32(rounded(a)), vreinterpretq_u16_u32(rounded(b))));
  }

 private:
  // Each lane rounded to nearest even in its top 16 bits (a NaN: quiet, its top half kept).
  static uint32x4_t rounded(float32x4_t v) {
    const uint32x4_t bits = vreinterpretq_u32_f32(v);
    const uint32x4_t lsb = vandq_u32(vshrq_n_u32(bits, 16), vdupq_n_u32(1));
    const uint32x4_t up = vaddq_u32(bits, vaddq_u32(vdupq_n_u32(0x7FFF), lsb));
    const uint32x4_t nan = vmvnq_u32(vceqq_f32(v, v));  // unordered: v != v
    return vbslq_u32(nan, vorrq_u32(bits, vdupq_n_u32(0x00400000)), up);
  }
};

// y = x * cos_dup + swap_pairs(x) * sin_signed: rev64 swaps the floats of each 64-bit pair,
// (x0 x1 x2 x3) -> (x1 x0 x3 x2); the product x * cos rounded, the other fused (as AVX2's).
inline float32x4_t rotate_pairs(float32x4_t v, float32x4_t c, float32x4_t s) {
  return vfmaq_f32(vmulq_f32(v, c), vrev64q_f32(v), s);
}

// y1 = x1 c - x2 s, y2 = x2 c + x1 s (as AVX2's fnmadd/fmadd: x * c rounded, the other fused).
inline void rotate_halves(float32x4_t x1, float32x4_t x2, float32x4_t c, float32x4_t s, float32x4_t& y1,
                          float32x4_t& y2) {
  y1 = vfmsq_f32(vmulq_f32(x1, c), x2, s);
  y2 = vfmaq_f32(vmulq_f32(x2, c), x1, s);
}

// One token's rows as the walks read them, in locals: a store through x may alias p.
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

// Head after head, each row in address order, two vectors a step, then one, then the remainder
// (2 floats: rotary_dim is even) through the buffer. kRotary > 0: the width known when compiled.
template <typename S, int kRotary>
void rotate_interleaved(RowWalk w, typename S::Element* rows, std::int64_t heads) {
  const int rotary = kRotary > 0 ? kRotary : w.rotary;
  for (std::int64_t h = 0; h < heads; ++h) {
    typename S::Element* x = rows + h * w.dim;
    int j = 0;
#pragma GCC unroll 8
    for (; j + 8 <= rotary; j += 8) {
      float32x4_t x0, x1;
      S::load2(x + j, x0, x1);
      S::store2(x + j, rotate_pairs(x0, vld1q_f32(w.c + j), vld1q_f32(w.s + j)),
                rotate_pairs(x1, vld1q_f32(w.c + j + 4), vld1q_f32(w.s + j + 4)));
    }
    if (j + 4 <= rotary) {
      S::store(x + j, rotate_pairs(S::load(x + j), vld1q_f32(w.c + j), vld1q_f32(w.s + j)));
      j += 4;
    }
    if (j < rotary) {  // the table's vector reads into the row's sin part or slack: lanes unused
      const int n = rotary - j;
      S::store_first(x + j, rotate_pairs(S::load_first(x + j, n), vld1q_f32(w.c + j), vld1q_f32(w.s + j)), n);
    }
  }
}

template <typename S, int kRotary>
void rotate_half_split(RowWalk w, typename S::Element* rows, std::int64_t heads) {
  const int half = (kRotary > 0 ? kRotary : w.rotary) / 2;
  for (std::int64_t h = 0; h < heads; ++h) {
    typename S::Element* x = rows + h * w.dim;
    int i = 0;
#pragma GCC unroll 8
    for (; i + 8 <= half; i += 8) {
      float32x4_t a1, b1, a2, b2, ya1, yb1, ya2, yb2;
      S::load2(x + i, a1, b1);
      S::load2(x + half + i, a2, b2);
      rotate_halves(a1, a2, vld1q_f32(w.c + i), vld1q_f32(w.s + i), ya1, ya2);
      rotate_halves(b1, b2, vld1q_f32(w.c + i + 4), vld1q_f32(w.s + i + 4), yb1, yb2);
      S::store2(x + i, ya1, yb1);
      S::store2(x + half + i, ya2, yb2);
    }
    if (i + 4 <= half) {
      float32x4_t y1, y2;
      rotate_halves(S::load(x + i), S::load(x + half + i), vld1q_f32(w.c + i), vld1q_f32(w.s + i), y1, y2);
      S::store(x + i, y1);
      S::store(x + half + i, y2);
      i += 4;
    }
    if (i < half) {
      const int n = half - i;
      float32x4_t y1, y2;
      rotate_halves(S::load_first(x + i, n), S::load_first(x + half + i, n), vld1q_f32(w.c + i),
                    vld1q_f32(w.s + i), y1, y2);
      S::store_first(x + i, y1, n);
      S::store_first(x + half + i, y2, n);
    }
  }
}

// The prefill walk of one token's heads; the widths most models rotate get a loop of their own.
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

// A single-token call (decode): column block outermost, heads inside, so that the block's cos and
// sin stay in registers while every head's block is rotated (as the AVX2 level's; each element
// sees the same operations as in the row walk). Four vectors a head (16 floats), then one, then
// the remainder; NEON's 32 registers hold the block's 8 of cos and sin and the head's 4.
template <typename S, typename Args>
void rotate_interleaved_heads(const Args& p, typename S::Element* rows, std::int64_t heads) {
  const float* c = p.table;
  const float* s = p.table + p.rotary_dim;
  const int rotary = p.rotary_dim;
  const std::int64_t stride = p.head_dim;
  int j = 0;
  for (; j + 16 <= rotary; j += 16) {
    const float32x4_t c0 = vld1q_f32(c + j), s0 = vld1q_f32(s + j), c1 = vld1q_f32(c + j + 4), s1 = vld1q_f32(s + j + 4);
    const float32x4_t c2 = vld1q_f32(c + j + 8), s2 = vld1q_f32(s + j + 8);
    const float32x4_t c3 = vld1q_f32(c + j + 12), s3 = vld1q_f32(s + j + 12);
    typename S::Element* x = rows + j;
    for (std::int64_t h = 0; h < heads; ++h, x += stride) {
      float32x4_t x0, x1, x2, x3;
      S::load2(x, x0, x1);
      S::load2(x + 8, x2, x3);
      S::store2(x, rotate_pairs(x0, c0, s0), rotate_pairs(x1, c1, s1));
      S::store2(x + 8, rotate_pairs(x2, c2, s2), rotate_pairs(x3, c3, s3));
    }
  }
  for (; j + 4 <= rotary; j += 4) {
    const float32x4_t cj = vld1q_f32(c + j), sj = vld1q_f32(s + j);
    typename S::Element* x = rows + j;
    for (std::int64_t h = 0; h < heads; ++h, x += stride) S::store(x, rotate_pairs(S::load(x), cj, sj));
  }
  if (j < rotary) {
    const int n = rotary - j;
    const float32x4_t cj = vld1q_f32(c + j), sj = vld1q_f32(s + j);  // the row's slack past sin
    typename S::Element* x = rows + j;
    for (std::int64_t h = 0; h < heads; ++h, x += stride) {
      S::store_first(x, rotate_pairs(S::load_first(x, n), cj, sj), n);
    }
  }
}

// The same for the half-split layout (pairs x_i, x_{i + rotary_dim/2}): two vectors a half.
template <typename S, typename Args>
void rotate_half_split_heads(const Args& p, typename S::Element* rows, std::int64_t heads) {
  const int half = p.rotary_dim / 2;
  const float* c = p.table;
  const float* s = p.table + p.rotary_dim;
  const std::int64_t stride = p.head_dim;
  int i = 0;
  for (; i + 8 <= half; i += 8) {
    const float32x4_t c0 = vld1q_f32(c + i), s0 = vld1q_f32(s + i), c1 = vld1q_f32(c + i + 4), s1 = vld1q_f32(s + i + 4);
    typename S::Element* x = rows + i;
    for (std::int64_t h = 0; h < heads; ++h, x += stride) {
      float32x4_t a1, b1, a2, b2, ya1, yb1, ya2, yb2;
      S::load2(x, a1, b1);
      S::load2(x + half, a2, b2);
      rotate_halves(a1, a2, c0, s0, ya1, ya2);
      rotate_halves(b1, b2, c1, s1, yb1, yb2);
      S::store2(x, ya1, yb1);
      S::store2(x + half, ya2, yb2);
    }
  }
  for (; i + 4 <= half; i += 4) {
    const float32x4_t cv = vld1q_f32(c + i), sv = vld1q_f32(s + i);
    typename S::Element* x = rows + i;
    for (std::int64_t h = 0; h < heads; ++h, x += stride) {
      float32x4_t y1, y2;
      rotate_halves(S::load(x), S::load(x + half), cv, sv, y1, y2);
      S::store(x, y1);
      S::store(x + half, y2);
    }
  }
  if (i < half) {
    const int n = half - i;
    const float32x4_t cv = vld1q_f32(c + i), sv = vld1q_f32(s + i);  // lanes past n unused
    typename S::Element* x = rows + i;
    for (std::int64_t h = 0; h < heads; ++h, x += stride) {
      float32x4_t y1, y2;
      rotate_halves(S::load_first(x, n), S::load_first(x + half, n), cv, sv, y1, y2);
      S::store_first(x, y1, n);
      S::store_first(x + half, y2, n);
    }
  }
}

// kZipHalvesSwapped: the interleaved table's zip halves in the wrong order (a mutant's; false in
// every real kernel).
template <typename S, bool kZipHalvesSwapped = false>
struct NeonLevel {
  template <typename Args>
  static void exact(const Args& p, double m) {
    const AngleState a = angle_state(p);
    sincos_of_theta(p, m, a.cos_m, a.sin_m);
    emit_table<kZipHalvesSwapped>(p);
  }
  template <typename Args>
  static void step(const Args& p) {
    const AngleState a = angle_state(p);
    sincos_of_theta(p, 1.0, a.cos_step, a.sin_step);
  }
  template <typename Args>
  static void advance(const Args& p) {
    advance_angles(p);
    emit_table<kZipHalvesSwapped>(p);
  }
  template <typename Args>
  static void rotate(const Args& p, typename S::Element* rows, std::int64_t heads) {
    if (p.tokens == 1) {  // decode: the table once per column block
      p.interleaved ? rotate_interleaved_heads<S>(p, rows, heads) : rotate_half_split_heads<S>(p, rows, heads);
      return;
    }
    rotate_prefill<S>(row_walk(p), rows, heads, p.interleaved);
  }
};

}  // namespace
}  // namespace ropecheck::kernels
