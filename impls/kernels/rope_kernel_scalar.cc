// The fast RoPE algorithm (rope_kernel.h) in portable C++: the reference for the SIMD levels and
// the level that runs on any CPU, on fp32 and on bf16 storage (storage.h's portable rounding).
// sin/cos from SLEEF's scalar sincos, like the vector levels.
#include <sleef.h>

#include "rope_kernel.h"
#include "ropecheck/storage.h"

namespace ropecheck::kernels {
namespace {

inline float load(const float* x) { return *x; }
inline void store(float* x, float v) { *x = v; }
inline float load(const std::uint16_t* x) { return float_from_bf16(*x); }
inline void store(std::uint16_t* x, float v) { *x = bf16_from_float(v); }

template <typename Element>
void rotate_row(const RopeKernelArgs<Element>& p, Element* x) {
  const int half = p.rotary_dim / 2;
  const float* c = p.table;
  const float* s = p.table + p.rotary_dim;
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

template <typename Element>
void rope_scalar(const RopeKernelArgs<Element>& p) {
  const int half = p.rotary_dim / 2;
  float* cos_table = p.table;
  float* sin_table = p.table + p.rotary_dim;
  for (std::int64_t t = 0; t < p.tokens; ++t) {
    const double m = static_cast<double>(p.positions[t]);
    for (int i = 0; i < half; ++i) {
      const Sleef_double2 sc = Sleef_sincos_u10(m * p.theta[i]);
      const auto s = static_cast<float>(sc.x), c = static_cast<float>(sc.y);
      if (p.interleaved) {
        cos_table[2 * i] = cos_table[2 * i + 1] = c;
        sin_table[2 * i] = -s;
        sin_table[2 * i + 1] = s;
      } else {
        cos_table[i] = c;
        sin_table[i] = s;
      }
    }
    for (std::int64_t h = 0; h < p.q_heads; ++h) rotate_row(p, p.q + (t * p.q_heads + h) * p.head_dim);
    for (std::int64_t h = 0; h < p.k_heads; ++h) rotate_row(p, p.k + (t * p.k_heads + h) * p.head_dim);
  }
}

}  // namespace

void rope_kernel_scalar(const RopeKernelProblem& p) { rope_scalar(p); }
void rope_kernel_bf16_scalar(const RopeKernelBf16Problem& p) { rope_scalar(p); }

}  // namespace ropecheck::kernels
