// The fused QK-norm + RoPE kernel (qk_norm_rope_kernel.h) with SVE, vector-length agnostic: the
// sve level's rows (rope_kernel_sve_body.h) and its rotation (rotate_pairs; the half-split's mls
// and mla), svcntw() floats a vector, every loop's last vector predicated by svwhilelt. A head is
// read twice: once for its sum of squares (a merging FMA a vector, reduced once), once more from L1
// to normalize, rotate and store it; the normalized value never leaves the registers. bf16 and fp16
// one value a 32-bit lane, as the sve RoPE kernel stores them. No fast path of its own (the
// AVX-512 level's keeps the folded weight of a whole head in arrays of registers, which sizeless
// SVE types cannot form): every shape takes the general Head below. Compiled with the sve level's
// flags (CMake object library); only called after getauxval says SVE.
// Napkin math, per element: 1 load for the sum (1 FMA), 1 load + 1 store for the result (2 for x r
// w', 2 for the rotation; the storage norm's two roundings 2 conversions each), 4 + 4 bytes in
// fp32, 2 + 2 in bf16/fp16; per head one divide and one root a lane, kFormBatch heads together.
#include <arm_sve.h>

#include "impls/kernels/qk_norm_rope_kernel_body.h"
#include "impls/kernels/rope_kernel_sve_body.h"

namespace ropecheck::kernels {
namespace {

// The storages as the form reads and writes them, and a value rounded to the storage and widened
// back in registers (the two passes' first).
struct FormSveFp32 : SveFp32 {
  static svfloat32_t rounded(svbool_t, svfloat32_t v) { return v; }
};

struct FormSveFp16 : SveFp16 {
  static svfloat32_t rounded(svbool_t pg, svfloat32_t v) { return svcvt_f32_f16_x(pg, svcvt_f16_f32_x(pg, v)); }
};

struct FormSveBf16 : SveBf16 {
  static svfloat32_t rounded(svbool_t pg, svfloat32_t v) {
    return svreinterpret_f32_u32(svand_n_u32_x(pg, bf16_rounded_top(pg, v), 0xFFFF0000u));
  }
};

template <typename S, FormNorm kNorm, bool kRotate>
struct SveFormHead {
  using Element = typename S::Element;

  static float sum_of_squares(const Element* x, int d) {
    svfloat32_t s = svdup_n_f32(0.0f);
    for (std::int64_t f = 0; f < d; f += static_cast<std::int64_t>(svcntw())) {
      const svbool_t pg = svwhilelt_b32(f, std::int64_t{d});
      const svfloat32_t v = S::load(pg, x + f);
      s = svmla_f32_m(pg, s, v, v);
    }
    return svaddv_f32(svptrue_b32(), s);
  }

  // x r w' as the norm keeps it (x itself without one).
  static svfloat32_t normed(svbool_t pg, svfloat32_t x, svfloat32_t r, svfloat32_t w) {
    if constexpr (kNorm == FormNorm::none) {
      (void)pg, (void)r, (void)w;
      return x;
    } else if constexpr (kNorm == FormNorm::fp32) {
      return svmul_f32_x(pg, svmul_f32_x(pg, x, r), w);
    } else {
      return S::rounded(pg, svmul_f32_x(pg, S::rounded(pg, svmul_f32_x(pg, x, r)), w));
    }
  }
  static svfloat32_t weight(svbool_t pg, const float* w, std::int64_t f) {
    if constexpr (kNorm == FormNorm::none) {
      (void)pg, (void)w, (void)f;
      return svdup_n_f32(0.0f);
    } else {
      return svld1_f32(pg, w + f);
    }
  }

  // 1 / sqrt(s / d + eps) of up to kFormBatch heads, each step one IEEE fp32 operation a lane (the
  // reference's expression).
  static void inverse_rms(const float* s, int count, int d, float eps, float* r) {
    for (std::int64_t i = 0; i < count; i += static_cast<std::int64_t>(svcntw())) {
      const svbool_t pg = svwhilelt_b32(i, std::int64_t{count});
      const svfloat32_t mean =
          svadd_n_f32_x(pg, svdiv_n_f32_x(pg, svld1_f32(pg, s + i), static_cast<float>(d)), eps);
      svst1_f32(pg, r + i, svdiv_f32_x(pg, svdup_n_f32(1.0f), svsqrt_f32_x(pg, mean)));
    }
  }

  static void apply(const QkNormRopeArgs& p, Element* x, const float* w, FormAngles a, float r_value) {
    const std::int64_t d = p.head_dim;
    const svfloat32_t r = svdup_n_f32(r_value);
    const std::int64_t rotary = kRotate ? p.rotary_dim : 0;
    const auto vl = static_cast<std::int64_t>(svcntw());
    if constexpr (kRotate) {
      if (p.interleaved) {
        for (std::int64_t j = 0; j < rotary; j += vl) {
          const svbool_t pg = svwhilelt_b32(j, rotary);
          const svfloat32_t v = normed(pg, S::load(pg, x + j), r, weight(pg, w, j));
          S::store(pg, x + j, rotate_pairs(pg, v, svld1_f32(pg, a.c + j), svld1_f32(pg, a.s + j)));
        }
      } else {
        const std::int64_t half = rotary / 2;
        for (std::int64_t i = 0; i < half; i += vl) {
          const svbool_t pg = svwhilelt_b32(i, half);
          const svfloat32_t x1 = normed(pg, S::load(pg, x + i), r, weight(pg, w, i));
          const svfloat32_t x2 = normed(pg, S::load(pg, x + half + i), r, weight(pg, w, half + i));
          const svfloat32_t c = svld1_f32(pg, a.c + i), s = svld1_f32(pg, a.s + i);
          S::store(pg, x + i, svmls_f32_x(pg, svmul_f32_x(pg, x1, c), x2, s));         // x1 c - x2 s
          S::store(pg, x + half + i, svmla_f32_x(pg, svmul_f32_x(pg, x2, c), x1, s));  // x2 c + x1 s
        }
      }
    }
    // The features past the rotated ones: normalized, not rotated (untouched without a norm).
    if constexpr (kNorm != FormNorm::none) {
      for (std::int64_t f = rotary; f < d; f += vl) {
        const svbool_t pg = svwhilelt_b32(f, d);
        S::store(pg, x + f, normed(pg, S::load(pg, x + f), r, weight(pg, w, f)));
      }
    }
  }
};

}  // namespace

void qk_norm_rope_sve(const QkNormRopeArgs& p) {
  form_dispatch<SveFormHead, SveLevel<SveFp32>, FormSveFp32, FormSveBf16, FormSveFp16>(p);
}

}  // namespace ropecheck::kernels
