// Element-by-element judgement of a port's outputs (judge.h). Non-finite values are handled as
// the properties handle them (properties/harness): a NaN error is an infinite one, a zero pair
// must rotate to exact zeros, and the features past rotary_dim must come back bit for bit.
#include "vectors/judge.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/position_axes.h"
#include "core/tolerance.h"

namespace ropecheck {
namespace {

// Error in units of eps32 * unit. Expected values are finite on every golden case; a non-finite
// one (a hand-made manifest) is met only by the same value, as NaN and Inf propagate through a
// rotation.
double element_error(double got, double want, double unit) {
  if (!std::isfinite(want)) {
    const bool same = std::isnan(want) ? std::isnan(got) : got == want;
    return same ? 0.0 : INFINITY;
  }
  const double diff = std::abs(got - want);
  const double error = unit > 0 ? diff / (kEps32 * unit) : (diff == 0 ? 0.0 : INFINITY);
  return std::isnan(error) ? INFINITY : error;
}

// Features (a, b) of pair i: interleaved (2i, 2i+1), half_split (i, i + rotary_dim/2).
std::pair<std::size_t, std::size_t> pair_features(const RopeSpec& spec, int i) {
  const auto k = static_cast<std::size_t>(i);
  if (spec.layout == Layout::interleaved) return {2 * k, 2 * k + 1};
  return {k, k + static_cast<std::size_t>(spec.rotary_dim / 2)};
}

bool same_bits(float a, float b) {
  return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
}

}  // namespace

WorstError worse_of(const WorstError& a, const WorstError& b) {
  if (b.ratio > a.ratio || (a.where.empty() && !b.where.empty() && b.ratio >= a.ratio)) return b;
  return a;
}

WorstError judge_rope_tensor(const ManifestCase& c, const std::string& tensor,
                             std::span<const float> input, std::span<const float> output,
                             std::span<const double> expected,
                             std::span<const std::int64_t> positions,
                             std::span<const double> theta, AnglePrecision angles) {
  const RopeSpec& spec = c.rope_spec;
  const RopeTolerance& tolerance = c.rope_tolerance;
  const auto dim = static_cast<std::size_t>(spec.head_dim);
  WorstError worst;
  if (positions.empty()) return worst;
  // Pair i rotates by its axis's position (position_axes.h): token t's is positions[t * axes +
  // axis_of[i]]. One axis: positions[t].
  const auto axes = static_cast<std::size_t>(axis_count(spec));
  const std::vector<int> axis_of = pair_axes(spec.axes, spec.rotary_dim);
  const std::size_t tokens = positions.size() / axes;
  const std::size_t heads = input.size() / (tokens * dim);
  const auto axis_text = [&](int i) {
    return axes == 1 ? std::string() : fmt::format(", axis {}", axis_of[static_cast<std::size_t>(i)]);
  };
  for (std::size_t t = 0; t < tokens; ++t) {
    for (std::size_t h = 0; h < heads; ++h) {
      const std::size_t row = (t * heads + h) * dim;
      for (int i = 0; i < spec.rotary_dim / 2; ++i) {
        const auto [fa, fb] = pair_features(spec, i);
        const double theta_i = theta[static_cast<std::size_t>(i)];
        const std::int64_t position = positions[t * axes + static_cast<std::size_t>(axis_of[static_cast<std::size_t>(i)])];
        const double unit = tolerance.unit_pair_norm(
            std::hypot(static_cast<double>(input[row + fa]), static_cast<double>(input[row + fb])));
        const double bound = tolerance.bound_units(angles, position, theta_i, i);
        for (const std::size_t f : {fa, fb}) {
          const double error = element_error(output[row + f], expected[row + f], unit);
          if (!(error / bound > worst.ratio || worst.where.empty())) continue;
          worst = {error / bound, error, bound,
                   fmt::format("{} token {} head {} feature {} (pair {}, position {}{}, theta {:.6g}): "
                               "got {:.9g}, want {:.17g}",
                               tensor, t, h, f, i, position, axis_text(i), theta_i, output[row + f],
                               expected[row + f]),
                   ""};
        }
      }
      // The tail passes through unchanged: any other bit pattern is an infinite error.
      for (std::size_t f = static_cast<std::size_t>(spec.rotary_dim); f < dim; ++f) {
        if (same_bits(output[row + f], input[row + f])) continue;
        return {INFINITY, INFINITY, tolerance.bound_units(angles, positions[t * axes], theta[0], 0),
                fmt::format("{} token {} head {} feature {} (past rotary_dim {}, must pass through "
                            "bit for bit): got {:.9g}, input {:.9g}",
                            tensor, t, h, f, spec.rotary_dim, output[row + f], input[row + f]),
                ""};
      }
    }
  }
  return worst;
}

WorstError judge_sinusoidal_table(const ManifestCase& c, std::span<const float> output,
                                  std::span<const double> expected,
                                  std::span<const std::int64_t> positions, AnglePrecision angles) {
  const auto d = static_cast<std::size_t>(c.sinusoidal_spec.d_model);
  WorstError worst;
  for (std::size_t t = 0; t < positions.size(); ++t) {
    for (std::size_t j = 0; j < d; ++j) {
      const double bound = c.sinusoidal_tolerance.bound_units(
          angles, positions[t], static_cast<int>(j / 2), c.sinusoidal_spec);
      const double error = element_error(output[t * d + j], expected[t * d + j], 1.0);
      if (!(error / bound > worst.ratio || worst.where.empty())) continue;
      worst = {error / bound, error, bound,
               fmt::format("pe position {} feature {}: got {:.9g}, want {:.17g}", positions[t], j,
                           output[t * d + j], expected[t * d + j]),
               ""};
    }
  }
  return worst;
}

}  // namespace ropecheck
