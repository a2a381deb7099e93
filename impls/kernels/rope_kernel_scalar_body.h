// The scalar RoPE kernel body (rope_kernel.h's algorithm in portable C++): loads and stores of
// fp32, bf16 and fp16 (storage.h's portable rounding) and ScalarLevel for run_tokens.
// rope_kernel_scalar.cc makes the kernel of it, and the fused RoPE + KV-cache kernel
// (fused_cache_scalar.cc) rotates with the same code. Internal linkage, as the SIMD bodies.
#pragma once

#include <sleef.h>

#include "core/storage.h"
#include "impls/kernels/rope_kernel.h"

namespace ropecheck::kernels {
namespace {

inline float load(const float* x) { return *x; }
inline void store(float* x, float v) { *x = v; }
inline float load(const std::uint16_t* x) { return float_from_bf16(*x); }
inline void store(std::uint16_t* x, float v) { *x = bf16_from_float(v); }
inline float load(const Fp16* x) { return float_from_fp16(*x); }
inline void store(Fp16* x, float v) { *x = fp16_from_float(v); }

struct ScalarLevel {
  template <typename Args>
  static void exact(const Args& p, double m) {
    const AngleState a = angle_state(p);
    for (int i = 0; i < p.rotary_dim / 2; ++i) {
      const Sleef_double2 sc = Sleef_sincos_u35(m * p.theta[i]);
      a.sin_m[i] = sc.x;
      a.cos_m[i] = sc.y;
    }
    emit(p);
  }

  template <typename Args>
  static void step(const Args& p) {
    const AngleState a = angle_state(p);
    for (int i = 0; i < p.rotary_dim / 2; ++i) {
      const Sleef_double2 sc = Sleef_sincos_u35(p.theta[i]);
      a.sin_step[i] = sc.x;
      a.cos_step[i] = sc.y;
    }
  }

  template <typename Args>
  static void advance(const Args& p) {
    const AngleState a = angle_state(p);
    for (int i = 0; i < p.rotary_dim / 2; ++i) {
      const double c = a.cos_m[i], s = a.sin_m[i];
      a.cos_m[i] = c * a.cos_step[i] - s * a.sin_step[i];
      a.sin_m[i] = s * a.cos_step[i] + c * a.sin_step[i];
    }
    emit(p);
  }

  // The AngleState rounded to fp32 into the table.
  template <typename Args>
  static void emit(const Args& p) {
    const AngleState a = angle_state(p);
    float* cos_table = p.table;
    float* sin_table = p.table + p.rotary_dim;
    for (int i = 0; i < p.rotary_dim / 2; ++i) {
      const auto c = static_cast<float>(a.cos_m[i] * p.cos_sin_scale);
      const auto s = static_cast<float>(a.sin_m[i] * p.cos_sin_scale);
      if (p.interleaved) {
        cos_table[2 * i] = cos_table[2 * i + 1] = c;
        sin_table[2 * i] = -s;
        sin_table[2 * i + 1] = s;
      } else {
        cos_table[i] = c;
        sin_table[i] = s;
      }
    }
  }

  template <typename Element>
  static void rotate(const RopeKernelArgs<Element>& p, Element* rows, std::int64_t heads) {
    const int half = p.rotary_dim / 2;
    const float* c = p.table;
    const float* s = p.table + p.rotary_dim;
    for (std::int64_t h = 0; h < heads; ++h) {
      Element* x = rows + h * p.head_dim;
      if (p.interleaved) {
        for (int j = 0; j < p.rotary_dim; j += 2) {
          const float a = load(x + j), b = load(x + j + 1);
          // s holds [-s_i, s_i]: y = x * cos_dup + swap_pairs(x) * sin_signed
          store(x + j, a * c[j] + b * s[j]);
          store(x + j + 1, b * c[j + 1] + a * s[j + 1]);
        }
      } else {
        for (int i = 0; i < half; ++i) {
          const float a = load(x + i), b = load(x + i + half);
          store(x + i, a * c[i] - b * s[i]);
          store(x + i + half, b * c[i] + a * s[i]);
        }
      }
    }
  }
};

}  // namespace
}  // namespace ropecheck::kernels
