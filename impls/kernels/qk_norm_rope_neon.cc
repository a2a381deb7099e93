// The fused QK-norm + RoPE kernel (qk_norm_rope_kernel.h) with aarch64 NEON: the NEON level's rows
// (rope_kernel_neon_body.h) and its rotation (rotate_pairs; rotate_halves), 4 floats a vector,
// with its storage policies (bf16 and fp16 rounded as its kernels round them). A head is read
// twice: once for its sum of squares (two accumulators), once more from L1 to normalize, rotate
// and store it. Every remainder (features, weights, angles: a cos/sin cache's row may end at the
// end of its buffer) goes through a stack buffer: NEON has no masked loads. The models' shapes
// (half-split, rotary_dim == head_dim of 64, 128 or 256, the fp32 norm) take FormFastNeon in
// qk_norm_rope_kernel_body.h's pipeline (the x86 levels' FormFast256: the weight folded into the
// angles, in an L1 row). Compiled with the aarch64 baseline's flags (CMake object library).
// Napkin math: as qk_norm_rope_avx2.cc's; a head of 128 is 32 vectors read twice and written once.
#include <arm_neon.h>

#include "impls/kernels/qk_norm_rope_kernel_body.h"
#include "impls/kernels/rope_kernel_neon_body.h"

namespace ropecheck::kernels {
namespace {

// The storages with a value rounded to the storage and widened back in registers (the two
// passes' first).
struct FormNeonFp32 : Fp32Storage {
  static float32x4_t rounded(float32x4_t v) { return v; }
};

struct FormNeonFp16 : Fp16Storage {
  static float32x4_t rounded(float32x4_t v) { return vcvt_f32_f16(vcvt_f16_f32(v)); }
};

struct FormNeonBf16 : Bf16Storage {
  // Bf16Storage's rounding (storage.h's bf16_from_float), kept in the top half.
  static float32x4_t rounded(float32x4_t v) {
    const uint32x4_t bits = vreinterpretq_u32_f32(v);
    const uint32x4_t lsb = vandq_u32(vshrq_n_u32(bits, 16), vdupq_n_u32(1));
    const uint32x4_t up = vaddq_u32(bits, vaddq_u32(vdupq_n_u32(0x7FFF), lsb));
    const uint32x4_t nan = vmvnq_u32(vceqq_f32(v, v));
    const uint32x4_t kept = vbslq_u32(nan, vorrq_u32(bits, vdupq_n_u32(0x00400000)), up);
    return vreinterpretq_f32_u32(vandq_u32(kept, vdupq_n_u32(0xFFFF0000u)));
  }
};

// n < 4 floats of a weight or angle row, the rest 0: never read past the row's end.
inline float32x4_t form_load_first(const float* at, int n) { return Fp32Storage::load_first(at, n); }

// The fast path (qk_norm_rope_kernel_body.h's form_pipeline): half-split, rotary_dim == head_dim
// == D (64, 128 or 256), the norm in fp32. As the x86 levels' FormFast256: per token and view the
// weight is folded into the angles once (wc1 = w_i c_i, ws1 = w_i s_i, wc2 = w_(h+i) c_i, ws2 =
// w_(h+i) s_i, one product each) into an L1 row, then each head: y1 = x1 r wc1 - x2 r ws2, y2 =
// x2 r wc2 + x1 r ws1, stored once. The roundings are the unfused chain's count (x r, w c, the
// cache's c, the product): the same bound. S: the storage policy, 8 elements a load2 in order
// (the 16-bit storages' narrowing keeps its NaN case: kPlain changes nothing here).
template <typename S, int D>
struct FormFastNeon {
  using Element = typename S::Element;
  static constexpr int kHalf = D / 2, kVectors = kHalf / 4;  // vectors a half

  struct Folded {
    alignas(16) float row[4 * kHalf];  // per vector j: wc1, ws1, wc2, ws2 at 16 j
  };
  static Folded fold(const float* w, FormAngles a) {
    Folded k;
    for (int j = 0; j < kVectors; ++j) {
      const float32x4_t c = vld1q_f32(a.c + 4 * j), s = vld1q_f32(a.s + 4 * j);
      const float32x4_t w1 = vld1q_f32(w + 4 * j), w2 = vld1q_f32(w + kHalf + 4 * j);
      float* at = k.row + 16 * j;
      vst1q_f32(at, vmulq_f32(w1, c));
      vst1q_f32(at + 4, vmulq_f32(w1, s));
      vst1q_f32(at + 8, vmulq_f32(w2, c));
      vst1q_f32(at + 12, vmulq_f32(w2, s));
    }
    return k;
  }

  static bool finite(const Folded& k) {
    const float32x4_t bound = vdupq_n_f32(kFormPlainCoefficient);
    uint32x4_t below = vdupq_n_u32(0xFFFFFFFFu);
    for (int j = 0; j < 4 * kHalf; j += 4) below = vandq_u32(below, vcaltq_f32(vld1q_f32(k.row + j), bound));
    return vminvq_u32(below) == 0xFFFFFFFFu;  // |x| < bound is false for a NaN
  }

  static float sum_of_squares(const Element* x) {
    float32x4_t acc[4];
#pragma GCC unroll 16
    for (int b = 0; b < 2 * kVectors; b += 2) {
      float32x4_t u, v;
      S::load2(x + 4 * b, u, v);
      const int j = b % 4;
      acc[j] = b < 4 ? vmulq_f32(u, u) : vfmaq_f32(acc[j], u, u);
      acc[j + 1] = b < 4 ? vmulq_f32(v, v) : vfmaq_f32(acc[j + 1], v, v);
    }
    return vaddvq_f32(vaddq_f32(vaddq_f32(acc[0], acc[1]), vaddq_f32(acc[2], acc[3])));
  }

  template <bool kPlain>
  static void apply(Element* x, float r_value, const Folded& k) {
    const float32x4_t r = vdupq_n_f32(r_value);
#pragma GCC unroll 8
    for (int b = 0; b < kVectors; b += 2) {
      float32x4_t x1[2], x2[2], y1[2], y2[2];
      S::load2(x + 4 * b, x1[0], x1[1]);
      S::load2(x + kHalf + 4 * b, x2[0], x2[1]);
      for (int j = 0; j < 2; ++j) {
        const float* at = k.row + 16 * (b + j);
        const float32x4_t r1 = vmulq_f32(x1[j], r), r2 = vmulq_f32(x2[j], r);
        y1[j] = vfmsq_f32(vmulq_f32(r1, vld1q_f32(at)), r2, vld1q_f32(at + 12));
        y2[j] = vfmaq_f32(vmulq_f32(r1, vld1q_f32(at + 4)), r2, vld1q_f32(at + 8));
      }
      S::store2(x + 4 * b, y1[0], y1[1]);
      S::store2(x + kHalf + 4 * b, y2[0], y2[1]);
    }
  }
};

template <typename S, FormNorm kNorm, bool kRotate>
struct NeonFormHead {
  using Element = typename S::Element;

  // The fast path (FormFastNeon, form_pipeline) where it applies.
  static bool fast_token(const QkNormRopeArgs& p, std::int64_t t, FormAngles a)
    requires(kNorm == FormNorm::fp32 && kRotate)
  {
    if (p.fast == nullptr || p.interleaved || p.rotary_dim != p.head_dim ||
        p.q_view.heads + p.k_view.heads > FormFastState::kMaxHeads) {
      return false;
    }
    switch (p.head_dim) {
      case 64: form_pipeline<FormFastNeon<S, 64>, NeonFormHead>(p, t, a); return true;
      case 128: form_pipeline<FormFastNeon<S, 128>, NeonFormHead>(p, t, a); return true;
      case 256: form_pipeline<FormFastNeon<S, 256>, NeonFormHead>(p, t, a); return true;
      default: return false;
    }
  }

  static float sum_of_squares(const Element* x, int d) {
    float32x4_t s0 = vdupq_n_f32(0.0f), s1 = vdupq_n_f32(0.0f);
    int f = 0;
    for (; f + 8 <= d; f += 8) {
      float32x4_t a, b;
      S::load2(x + f, a, b);
      s0 = vfmaq_f32(s0, a, a);
      s1 = vfmaq_f32(s1, b, b);
    }
    if (f + 4 <= d) {
      const float32x4_t a = S::load(x + f);
      s0 = vfmaq_f32(s0, a, a);
      f += 4;
    }
    if (f < d) {
      const float32x4_t a = S::load_first(x + f, d - f);
      s1 = vfmaq_f32(s1, a, a);
    }
    return vaddvq_f32(vaddq_f32(s0, s1));
  }

  static float32x4_t normed(float32x4_t x, float32x4_t r, float32x4_t w) {
    if constexpr (kNorm == FormNorm::none) {
      (void)r, (void)w;
      return x;
    } else if constexpr (kNorm == FormNorm::fp32) {
      return vmulq_f32(vmulq_f32(x, r), w);
    } else {
      return S::rounded(vmulq_f32(S::rounded(vmulq_f32(x, r)), w));
    }
  }
  static float32x4_t weight(const float* w, int f) {
    if constexpr (kNorm == FormNorm::none) return vdupq_n_f32(0.0f);
    return vld1q_f32(w + f);
  }
  static float32x4_t weight(const float* w, int f, int n) {
    if constexpr (kNorm == FormNorm::none) return vdupq_n_f32(0.0f);
    return form_load_first(w + f, n);
  }

  // 1 / sqrt(s / d + eps) of up to 16 heads, 4 a vector, each step one IEEE fp32 operation a lane
  // (the reference's expression).
  static void inverse_rms(const float* s, int count, int d, float eps, float* r) {
    const float32x4_t dv = vdupq_n_f32(static_cast<float>(d)), ev = vdupq_n_f32(eps), one = vdupq_n_f32(1.0f);
    for (int i = 0; i < count; i += 4) {
      const int n = count - i < 4 ? count - i : 4;
      const float32x4_t mean = vaddq_f32(vdivq_f32(n == 4 ? vld1q_f32(s + i) : form_load_first(s + i, n), dv), ev);
      const float32x4_t inverse = vdivq_f32(one, vsqrtq_f32(mean));
      if (n == 4) {
        vst1q_f32(r + i, inverse);
      } else {
        Fp32Storage::store_first(r + i, inverse, n);
      }
    }
  }

  static void apply(const QkNormRopeArgs& p, Element* x, const float* w, FormAngles a, float r_value) {
    const int d = p.head_dim;
    const float32x4_t r = vdupq_n_f32(r_value);
    const int rotary = kRotate ? p.rotary_dim : 0;
    if constexpr (kRotate) {
      if (p.interleaved) {
        int j = 0;
        for (; j + 8 <= rotary; j += 8) {
          float32x4_t x0, x1;
          S::load2(x + j, x0, x1);
          S::store2(x + j, rotate_pairs(normed(x0, r, weight(w, j)), vld1q_f32(a.c + j), vld1q_f32(a.s + j)),
                    rotate_pairs(normed(x1, r, weight(w, j + 4)), vld1q_f32(a.c + j + 4), vld1q_f32(a.s + j + 4)));
        }
        if (j + 4 <= rotary) {
          S::store(x + j, rotate_pairs(normed(S::load(x + j), r, weight(w, j)), vld1q_f32(a.c + j), vld1q_f32(a.s + j)));
          j += 4;
        }
        if (j < rotary) {
          const int n = rotary - j;
          S::store_first(x + j,
                         rotate_pairs(normed(S::load_first(x + j, n), r, weight(w, j, n)), form_load_first(a.c + j, n),
                                      form_load_first(a.s + j, n)),
                         n);
        }
      } else {
        const int half = rotary / 2;
        int i = 0;
        for (; i + 8 <= half; i += 8) {
          float32x4_t x1a, x1b, x2a, x2b, y1a, y2a, y1b, y2b;
          S::load2(x + i, x1a, x1b);
          S::load2(x + half + i, x2a, x2b);
          rotate_halves(normed(x1a, r, weight(w, i)), normed(x2a, r, weight(w, half + i)), vld1q_f32(a.c + i),
                        vld1q_f32(a.s + i), y1a, y2a);
          rotate_halves(normed(x1b, r, weight(w, i + 4)), normed(x2b, r, weight(w, half + i + 4)), vld1q_f32(a.c + i + 4),
                        vld1q_f32(a.s + i + 4), y1b, y2b);
          S::store2(x + i, y1a, y1b);
          S::store2(x + half + i, y2a, y2b);
        }
        for (; i + 4 <= half; i += 4) {
          float32x4_t y1, y2;
          rotate_halves(normed(S::load(x + i), r, weight(w, i)), normed(S::load(x + half + i), r, weight(w, half + i)),
                        vld1q_f32(a.c + i), vld1q_f32(a.s + i), y1, y2);
          S::store(x + i, y1);
          S::store(x + half + i, y2);
        }
        if (i < half) {
          const int n = half - i;
          float32x4_t y1, y2;
          rotate_halves(normed(S::load_first(x + i, n), r, weight(w, i, n)),
                        normed(S::load_first(x + half + i, n), r, weight(w, half + i, n)), form_load_first(a.c + i, n),
                        form_load_first(a.s + i, n), y1, y2);
          S::store_first(x + i, y1, n);
          S::store_first(x + half + i, y2, n);
        }
      }
    }
    // The features past the rotated ones: normalized, not rotated (untouched without a norm).
    if constexpr (kNorm != FormNorm::none) {
      int f = rotary;
      for (; f + 8 <= d; f += 8) {
        float32x4_t u, v;
        S::load2(x + f, u, v);
        S::store2(x + f, normed(u, r, weight(w, f)), normed(v, r, weight(w, f + 4)));
      }
      for (; f + 4 <= d; f += 4) S::store(x + f, normed(S::load(x + f), r, weight(w, f)));
      if (f < d) S::store_first(x + f, normed(S::load_first(x + f, d - f), r, weight(w, f, d - f)), d - f);
    }
  }
};

}  // namespace

void qk_norm_rope_neon(const QkNormRopeArgs& p) {
  form_dispatch<NeonFormHead, NeonLevel<Fp32Storage>, FormNeonFp32, FormNeonBf16, FormNeonFp16>(p);
}

}  // namespace ropecheck::kernels
