// Template definitions for rope_harness.h.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <utility>
#include <vector>

#include "core/frequency.h"
#include "core/tolerance.h"

namespace ropecheck {

template <typename BoundFn>
WorstElement worst_rotary_error(const RopeSpec& spec, StorageType storage, std::span<const float> x,
                                std::span<const float> y, std::span<const double> expected,
                                std::int64_t heads, std::span<const std::int64_t> positions,
                                BoundFn bound, std::size_t first_token) {
  const auto theta = inverse_frequencies(spec);
  const double a = attention_factor(spec);
  const auto dim = static_cast<std::size_t>(spec.head_dim);
  const int pairs = spec.rotary_dim / 2;
  // Per token, each pair's bound and features once for all its heads: a model shape's case
  // compares 33 million elements, and the bound's angle term costs a logarithm.
  std::vector<double> limits(static_cast<std::size_t>(pairs));
  std::vector<std::pair<std::size_t, std::size_t>> features(static_cast<std::size_t>(pairs));
  for (int i = 0; i < pairs; ++i) features[static_cast<std::size_t>(i)] = pair_features(spec, i);
  // The index in `positions` of the position each pair of a token rotates by (multi-axis specs:
  // its axis's, position_axes.h).
  const auto axes = static_cast<std::size_t>(axis_count(spec));
  const std::vector<int> axis = pair_axes(spec.axes, spec.rotary_dim);
  std::vector<std::size_t> at(static_cast<std::size_t>(pairs));
  WorstElement worst;
  for (std::size_t t = 0; t < positions.size() / axes; ++t) {
    for (int i = 0; i < pairs; ++i) {
      at[static_cast<std::size_t>(i)] = t * axes + static_cast<std::size_t>(axis[static_cast<std::size_t>(i)]);
      limits[static_cast<std::size_t>(i)] =
          bound(at[static_cast<std::size_t>(i)], theta[static_cast<std::size_t>(i)], i);
    }
    for (std::int64_t h = 0; h < heads; ++h) {
      const std::size_t row = (t * static_cast<std::size_t>(heads) + static_cast<std::size_t>(h)) * dim;
      for (int i = 0; i < pairs; ++i) {
        const auto [fa, fb] = features[static_cast<std::size_t>(i)];
        // Within an ulp of double: far below the bounds' resolution.
        const double norm = unit_pair_norm(storage, a, pair_magnitude(x[row + fa], x[row + fb]));
        const double limit = limits[static_cast<std::size_t>(i)];
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
                                 first_token + t, h, j, i, positions[at[static_cast<std::size_t>(i)]],
                                 theta[static_cast<std::size_t>(i)],
                                 y[row + j], expected[row + j])};
          }
        }
      }
    }
  }
  return worst;
}

}  // namespace ropecheck
