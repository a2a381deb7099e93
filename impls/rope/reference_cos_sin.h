// cos and sin of the angle m * theta_i as the scalar reference implementations form them, times
// the spec's attention factor a (frequency.h):
//   fp64 angles: cos(m theta) * a in double, rounded to fp32 once;
//   fp32 angles: float(m) * float(theta) in fp32, cosf/sinf, then times float(a) in fp32, which is
//   what HF does (emb.cos() * attention_scaling) and what the tolerance model's fp32 term covers.
#pragma once

#include <cmath>
#include <cstdint>
#include <utility>

#include "core/spec.h"

namespace ropecheck {

inline std::pair<float, float> reference_cos_sin(AnglePrecision precision, std::int64_t m,
                                                 double theta, double attention_factor) {
  if (precision == AnglePrecision::fp32) {
    const float angle = static_cast<float>(m) * static_cast<float>(theta);
    float c = std::cos(angle), s = std::sin(angle);
    if (attention_factor != 1.0) {
      c *= static_cast<float>(attention_factor);
      s *= static_cast<float>(attention_factor);
    }
    return {c, s};
  }
  const double angle = static_cast<double>(m) * theta;
  return {static_cast<float>(std::cos(angle) * attention_factor),
          static_cast<float>(std::sin(angle) * attention_factor)};
}

}  // namespace ropecheck
