// The fused QK-norm + RoPE kernel (qk_norm_rope_kernel.h) in portable C++: the scalar level's rows
// (rope_kernel_scalar_body.h), each head's sum of squares in order, the norm and ScalarLevel's
// rotation element by element, stored by the scalar truths (storage.h).
#include <cmath>

#include "impls/kernels/qk_norm_rope_kernel_body.h"
#include "impls/kernels/rope_kernel_scalar_body.h"

namespace ropecheck::kernels {
namespace {

template <typename E, FormNorm kNorm, bool kRotate>
struct ScalarFormHead {
  using Element = E;

  // x rounded to the storage and widened back (exact for fp32).
  static float rounded(float x) {
    Element e;
    store(&e, x);
    return load(&e);
  }

  static float normed(float x, float r, float w) {
    if constexpr (kNorm == FormNorm::none) {
      return x;
    } else if constexpr (kNorm == FormNorm::fp32) {
      return x * r * w;
    } else {
      return rounded(rounded(x * r) * w);
    }
  }

  static float sum_of_squares(const Element* x, int d) {
    float squares = 0;
    for (int f = 0; f < d; ++f) {
      const float v = load(x + f);
      squares += v * v;
    }
    return squares;
  }
  static void inverse_rms(const float* s, int count, int d, float eps, float* r) {
    for (int i = 0; i < count; ++i) r[i] = 1.0f / std::sqrt(s[i] / static_cast<float>(d) + eps);
  }

  static void apply(const QkNormRopeArgs& p, Element* x, const float* w, FormAngles a, float r) {
    const int d = p.head_dim;
    const auto at = [&](int f) { return normed(load(x + f), r, kNorm == FormNorm::none ? 1.0f : w[f]); };
    const int rotary = kRotate ? p.rotary_dim : 0;
    if constexpr (kRotate) {
      if (p.interleaved) {
        for (int j = 0; j < rotary; j += 2) {
          const float xa = at(j), xb = at(j + 1);
          // s holds [-s_i, s_i]: y = x * cos_dup + swap_pairs(x) * sin_signed
          store(x + j, xa * a.c[j] + xb * a.s[j]);
          store(x + j + 1, xb * a.c[j + 1] + xa * a.s[j + 1]);
        }
      } else {
        const int half = rotary / 2;
        for (int i = 0; i < half; ++i) {
          const float xa = at(i), xb = at(i + half);
          store(x + i, xa * a.c[i] - xb * a.s[i]);
          store(x + i + half, xb * a.c[i] + xa * a.s[i]);
        }
      }
    }
    if constexpr (kNorm != FormNorm::none) {
      for (int f = rotary; f < d; ++f) store(x + f, at(f));
    }
  }
};

}  // namespace

void qk_norm_rope_scalar(const QkNormRopeArgs& p) {
  form_dispatch<ScalarFormHead, ScalarLevel, float, std::uint16_t, Fp16>(p);
}

}  // namespace ropecheck::kernels
