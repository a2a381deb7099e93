// The SVE RoPE kernel body (rope_kernel.h's algorithm), vector-length agnostic: every loop steps
// by the run-time vector length (svcntw() floats, svcntd() doubles) under a svwhilelt predicate,
// so one binary runs at 128 to 2048 bits and never reads or writes a lane past rotary_dim or past
// a buffer (predicated loads and stores; no stack buffers, no remainder loop of its own). Include
// it ONLY from files compiled with the sve level's flags; everything here has internal linkage,
// so each such file gets its own copy, compiled for its own level.
//   Storage: one element a 32-bit lane whatever the type (fp16 and bf16 loaded zero-extended by
//   ld1h into 32-bit lanes and stored truncating by st1h), so the lanes of q, k and the table
//   line up and one predicate serves them all.
//   SVE types are sizeless (no struct members, arrays or lambda captures of them): the storage
//   policies and SveLevel are stateless, everything vector passes as a parameter.
#pragma once

#include <arm_sve.h>
#include <sleef.h>

#include <cstdint>

#include "core/fp16_bits.h"
#include "impls/kernels/rope_kernel.h"

namespace ropecheck::kernels {
namespace {

// Storage policies: load(pg, x) widens the active lanes to fp32 (the others read as zero),
// store(pg, x, v) narrows and writes the active lanes only.
struct SveFp32 {
  using Element = float;
  static svfloat32_t load(svbool_t pg, const float* x) { return svld1_f32(pg, x); }
  static void store(svbool_t pg, float* x, svfloat32_t v) { svst1_f32(pg, x, v); }
};

// fcvt: the fp16 in the low half of each 32-bit lane, where ld1h puts it and st1h takes it from.
// Round to nearest even (FPCR's default mode, which Linux starts every process in), subnormals
// kept (FZ16 clear), a NaN quieted with its sign and top payload bits: storage.h's fp16_from_float.
struct SveFp16 {
  using Element = Fp16;
  static svfloat32_t load(svbool_t pg, const Fp16* x) {
    const svuint32_t bits = svld1uh_u32(pg, reinterpret_cast<const std::uint16_t*>(x));
    return svcvt_f32_f16_x(pg, svreinterpret_f16_u32(bits));
  }
  static void store(svbool_t pg, Fp16* x, svfloat32_t v) {
    svst1h_u32(pg, reinterpret_cast<std::uint16_t*>(x), svreinterpret_u32_f16(svcvt_f16_f32_x(pg, v)));
  }
};

// storage.h's bf16_from_float with integer ops (no FEAT_BF16 needed): add 0x7FFF plus the kept
// part's lowest bit, keep the top half; a NaN keeps its top half with the quiet bit set (the carry
// could otherwise turn it into Inf). The result in the top half of each lane.
inline svuint32_t bf16_rounded_top(svbool_t pg, svfloat32_t v) {
  const svuint32_t bits = svreinterpret_u32_f32(v);
  const svuint32_t lsb = svand_n_u32_x(pg, svlsr_n_u32_x(pg, bits, 16), 1u);
  const svuint32_t rounded = svadd_u32_x(pg, bits, svadd_n_u32_x(pg, lsb, 0x7FFFu));
  const svbool_t nan = svcmpuo_f32(pg, v, v);
  return svsel_u32(nan, svorr_n_u32_x(pg, bits, 0x00400000u), rounded);
}

struct SveBf16 {
  using Element = std::uint16_t;
  static svfloat32_t load(svbool_t pg, const std::uint16_t* x) {
    return svreinterpret_f32_u32(svlsl_n_u32_x(pg, svld1uh_u32(pg, x), 16));  // exact
  }
  static void store(svbool_t pg, std::uint16_t* x, svfloat32_t v) {
    svst1h_u32(pg, x, svlsr_n_u32_x(pg, bf16_rounded_top(pg, v), 16));
  }
};

// Lanes 0, 2, 4, ...: the first feature of each interleaved pair.
inline svbool_t even_lanes() { return svtrn1_b32(svptrue_b32(), svpfalse_b()); }

// cos/sin of pairs [i, i + svcntd()) (the pd lanes), rounded to fp32, into the table layout of
// rope_kernel.h. fcvt leaves each float in the low (even) 32-bit half of its 64-bit lane.
template <typename Args>
inline void emit_table(const Args& p, std::int64_t i, svbool_t pd, svfloat64_t cos_d, svfloat64_t sin_d) {
  float* cos_table = p.table;
  float* sin_table = p.table + p.rotary_dim;
  // times the attention factor in double, then one rounding (exact when it is 1)
  const svfloat32_t c = svcvt_f32_f64_x(pd, svmul_n_f64_x(pd, cos_d, p.cos_sin_scale));
  const svfloat32_t s = svcvt_f32_f64_x(pd, svmul_n_f64_x(pd, sin_d, p.cos_sin_scale));
  if (p.interleaved) {
    // pair j's two lanes both from the even one: cos_dup = [c0 c0 c1 c1 ...]; sin_signed with
    // its even lanes negated = [-s0 s0 -s1 s1 ...]. The 2 * svcntd() = svcntw() floats of these
    // pairs, as far as rotary_dim.
    const svbool_t pw = svwhilelt_b32(2 * i, std::int64_t{p.rotary_dim});
    const svfloat32_t c2 = svtrn1_f32(c, c);
    const svfloat32_t s2 = svtrn1_f32(s, s);
    svst1_f32(pw, cos_table + 2 * i, c2);
    svst1_f32(pw, sin_table + 2 * i, svneg_f32_m(s2, even_lanes(), s2));
  } else {
    // st1w of 64-bit lanes stores each lane's low 32 bits: the floats, contiguous.
    svst1w_u64(pd, reinterpret_cast<std::uint32_t*>(cos_table + i), svreinterpret_u64_f32(c));
    svst1w_u64(pd, reinterpret_cast<std::uint32_t*>(sin_table + i), svreinterpret_u64_f32(s));
  }
}

// cos/sin of scale * theta_i into (cos_out, sin_out), and into the table when `emit`. SLEEF's
// sincos on whole vectors: the lanes past rotary_dim / 2 compute sincos(0) and are not stored.
template <typename Args>
void sincos_of_theta(const Args& p, double scale, double* cos_out, double* sin_out, bool emit) {
  const std::int64_t half = p.rotary_dim / 2;
  for (std::int64_t i = 0; i < half; i += static_cast<std::int64_t>(svcntd())) {
    const svbool_t pd = svwhilelt_b64(i, half);
    const svfloat64_t angle = svmul_n_f64_z(pd, svld1_f64(pd, p.theta + i), scale);
    const svfloat64x2_t sc = Sleef_sincosdx_u35sve(angle);  // (sin, cos)
    svst1_f64(pd, sin_out + i, svget2_f64(sc, 0));
    svst1_f64(pd, cos_out + i, svget2_f64(sc, 1));
    if (emit) emit_table(p, i, pd, svget2_f64(sc, 1), svget2_f64(sc, 0));
  }
}

// The AngleState to the next position by the step rotation, and into the table:
// c' = c cs - s ss, s' = s cs + c ss, each a product rounded then one FMA (as the AVX-512 level).
template <typename Args>
void advance_angles(const Args& p) {
  const AngleState a = angle_state(p);
  const std::int64_t half = p.rotary_dim / 2;
  for (std::int64_t i = 0; i < half; i += static_cast<std::int64_t>(svcntd())) {
    const svbool_t pd = svwhilelt_b64(i, half);
    const svfloat64_t c = svld1_f64(pd, a.cos_m + i), s = svld1_f64(pd, a.sin_m + i);
    const svfloat64_t cs = svld1_f64(pd, a.cos_step + i), ss = svld1_f64(pd, a.sin_step + i);
    const svfloat64_t c_next = svnmls_f64_x(pd, svmul_f64_x(pd, s, ss), c, cs);  // c cs - (s ss)
    const svfloat64_t s_next = svmla_f64_x(pd, svmul_f64_x(pd, c, ss), s, cs);   // (c ss) + s cs
    svst1_f64(pd, a.cos_m + i, c_next);
    svst1_f64(pd, a.sin_m + i, s_next);
    emit_table(p, i, pd, c_next, s_next);
  }
}

// (x0 x1 x2 x3 ...) -> (x1 x0 x3 x2 ...): revw swaps the two 32-bit halves of each 64-bit lane,
// and a pair never straddles two (features start at even offsets, pairs are whole).
inline svfloat32_t swap_pairs(svfloat32_t v) {
  return svreinterpret_f32_u64(svrevw_u64_x(svptrue_b64(), svreinterpret_u64_f32(v)));
}

// One vector of interleaved pairs: y = x * cos_dup + swap_pairs(x) * sin_signed (the product
// rounded, then one FMA: y_a = x_a c - x_b s, y_b = x_b c + x_a s).
inline svfloat32_t rotate_pairs(svbool_t pg, svfloat32_t v, svfloat32_t c, svfloat32_t s) {
  return svmla_f32_x(pg, svmul_f32_x(pg, v, c), swap_pairs(v), s);
}

// The lanes of features [j, j + svcntw()) below n. kDropTail is mutant/sve_tail_predicate_dropped
// (impls/mutants/sve_tail_predicate_dropped.cc): the predicate built for whole vectors only,
// so the last n mod svcntw() features, a partial vector, get none and stay as they were.
template <bool kDropTail>
inline svbool_t feature_lanes(std::int64_t j, std::int64_t n) {
  if constexpr (kDropTail) {
    return j + static_cast<std::int64_t>(svcntw()) <= n ? svptrue_b32() : svpfalse_b();  // BUG
  }
  return svwhilelt_b32(j, n);
}

// One token's q or k: `heads` consecutive head vectors of head_dim.
template <typename S, bool kDropTail, typename Args>
void rotate_part(const Args& p, typename S::Element* rows, std::int64_t heads, std::int64_t j, svbool_t pg,
                 svfloat32_t cv, svfloat32_t sv) {
  const std::int64_t dim = p.head_dim;  // a local: stores through x could alias p for all GCC knows
  if (p.interleaved) {
    for (std::int64_t h = 0; h < heads; ++h) {
      auto* x = rows + h * dim + j;
      S::store(pg, x, rotate_pairs(pg, S::load(pg, x), cv, sv));
    }
  } else {
    const std::int64_t half = p.rotary_dim / 2;
    for (std::int64_t h = 0; h < heads; ++h) {
      auto* x1 = rows + h * dim + j;
      auto* x2 = x1 + half;
      const svfloat32_t a = S::load(pg, x1), b = S::load(pg, x2);
      S::store(pg, x1, svmls_f32_x(pg, svmul_f32_x(pg, a, cv), b, sv));  // x1 c - x2 s
      S::store(pg, x2, svmla_f32_x(pg, svmul_f32_x(pg, b, cv), a, sv));  // x2 c + x1 s
    }
  }
}

// Every q head, then every k head, of one token, a vector of features (interleaved) or pairs
// (half-split) at a time: that vector's cos/sin loaded once and kept in registers across all the
// token's heads (the AVX-512 level's chunks; a sizeless vector cannot be held in an array, so a
// chunk is one vector here). The last vector's predicate stops at rotary_dim (interleaved) or
// rotary_dim / 2 (half-split, for both halves): features past rotary_dim are never touched.
template <typename S, bool kDropTail, typename Args>
void rotate_heads(const Args& p, typename S::Element* q, std::int64_t q_heads, typename S::Element* k,
                  std::int64_t k_heads) {
  const std::int64_t features = p.interleaved ? p.rotary_dim : p.rotary_dim / 2;
  const float* c = p.table;
  const float* s = p.table + p.rotary_dim;
  for (std::int64_t j = 0; j < features; j += static_cast<std::int64_t>(svcntw())) {
    const svbool_t pg = feature_lanes<kDropTail>(j, features);
    const svfloat32_t cv = svld1_f32(pg, c + j), sv = svld1_f32(pg, s + j);
    rotate_part<S, kDropTail>(p, q, q_heads, j, pg, cv, sv);
    rotate_part<S, kDropTail>(p, k, k_heads, j, pg, cv, sv);
  }
}

// rope_kernel.h's round_trip_*: S's widening and narrowing alone, a vector at a time, the last
// one predicated. (The asm keeps the compiler from pairing the two away.)
template <typename S>
void round_trip(typename S::Element* x, std::int64_t n) {
  for (std::int64_t i = 0; i < n; i += static_cast<std::int64_t>(svcntw())) {
    const svbool_t pg = svwhilelt_b32(i, n);
    svfloat32_t v = S::load(pg, x + i);
    asm("" : "+w"(v));
    S::store(pg, x + i, v);
  }
}

// rope_kernel.h's rotation_alone_*: the rotation with cos and sin in registers, blocks of two
// vectors (2 * svcntw() elements, a run-time length: rotation_alone_levels.h's block()); the
// remainder is only converted.
template <typename S>
void rotation_alone(typename S::Element* x, std::int64_t n, bool interleaved) {
  const svbool_t all = svptrue_b32();
  const svfloat32_t c = svdup_n_f32(kAloneCos), s = svdup_n_f32(kAloneSin);
  const svfloat32_t s_signed = svneg_f32_m(s, even_lanes(), s);
  const auto vl = static_cast<std::int64_t>(svcntw());
  std::int64_t i = 0;
  if (interleaved) {
    for (; i + 2 * vl <= n; i += 2 * vl) {
      const svfloat32_t y0 = rotate_pairs(all, S::load(all, x + i), c, s_signed);
      const svfloat32_t y1 = rotate_pairs(all, S::load(all, x + i + vl), c, s_signed);
      S::store(all, x + i, y0);
      S::store(all, x + i + vl, y1);
    }
  } else {
    for (; i + 2 * vl <= n; i += 2 * vl) {
      const svfloat32_t x1 = S::load(all, x + i), x2 = S::load(all, x + i + vl);
      S::store(all, x + i, svmls_f32_x(all, svmul_f32_x(all, x1, c), x2, s));
      S::store(all, x + i + vl, svmla_f32_x(all, svmul_f32_x(all, x2, c), x1, s));
    }
  }
  if (i < n) round_trip<S>(x + i, n - i);
}

// rope_kernel.h's Level for run_tokens, on storage S (kDropTail: the mutant's flipped decision).
template <typename S, bool kDropTail = false>
struct SveLevel {
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
  static void rotate_token(const Args& p, typename S::Element* q, std::int64_t q_heads, typename S::Element* k,
                           std::int64_t k_heads) {
    rotate_heads<S, kDropTail>(p, q, q_heads, k, k_heads);
  }
};

}  // namespace
}  // namespace ropecheck::kernels
