// Template definitions for rope_harness.h.
#pragma once

#include <fmt/format.h>

#include <cmath>

#include "core/frequency.h"
#include "core/tolerance.h"

namespace ropecheck {

template <typename BoundFn>
WorstElement worst_rotary_error(const RopeSpec& spec, StorageType storage, std::span<const float> x,
                                std::span<const float> y, std::span<const double> expected,
                                std::int64_t heads, std::span<const std::int64_t> positions,
                                BoundFn bound) {
  const auto theta = inverse_frequencies(spec);
  const double a = attention_factor(spec);
  const auto dim = static_cast<std::size_t>(spec.head_dim);
  WorstElement worst;
  for (std::size_t t = 0; t < positions.size(); ++t) {
    for (std::int64_t h = 0; h < heads; ++h) {
      const std::size_t row = (t * static_cast<std::size_t>(heads) + static_cast<std::size_t>(h)) * dim;
      for (int i = 0; i < spec.rotary_dim / 2; ++i) {
        const auto [fa, fb] = pair_features(spec, i);
        const double norm = unit_pair_norm(
            storage, a, std::hypot(static_cast<double>(x[row + fa]), static_cast<double>(x[row + fb])));
        const double limit = bound(t, theta[static_cast<std::size_t>(i)], i);
        for (const std::size_t j : {fa, fb}) {
          const double diff = std::abs(static_cast<double>(y[row + j]) - expected[row + j]);
          // A zero pair rotates to exact zeros; anything else there is an infinite error.
          double error = norm > 0 ? diff / (kEps32 * norm) : (diff == 0 ? 0.0 : INFINITY);
          if (std::isnan(error)) error = INFINITY;
          const double ratio = error / limit;
          if (ratio > worst.ratio || (worst.where.empty() && ratio >= worst.ratio)) {
            worst = {ratio, error, limit,
                     fmt::format("token {} head {} feature {} (pair {}, position {}, theta {:.6g}): "
                                 "got {:.9g}, want {:.17g}",
                                 t, h, j, i, positions[t], theta[static_cast<std::size_t>(i)],
                                 y[row + j], expected[row + j])};
          }
        }
      }
    }
  }
  return worst;
}

}  // namespace ropecheck
