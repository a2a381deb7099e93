// What the scalar references share, and only that: the capabilities each of them claims, and the
// traversal "per token, form the rotation once, apply it to every q head and every k head" (GQA).
// How the rotation is formed and applied (a dense matrix, complex numbers, cos/sin halves) stays
// each reference's own: one bug must not hide in all of them (docs/checks.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/frequency.h"
#include "impls/rope_impl.h"

namespace ropecheck::reference {

// Both layouts, both angle precisions, partial rotary, every multi-axis mode, both passes, scalar
// code, fp32 storage.
inline RopeCapabilities capabilities() {
  RopeCapabilities caps{{Layout::interleaved, Layout::half_split},
                        {AnglePrecision::fp32, AnglePrecision::fp64},
                        true, "scalar", true, ""};
  caps.axis_modes.assign(std::begin(kAllAxisModes), std::end(kAllAxisModes));
  caps.passes.assign(std::begin(kAllPasses), std::end(kAllPasses));
  return caps;
}

// The positions one token's pairs rotate by (core/position_axes.h): the token's position on
// each axis, and the axis of each pair.
struct TokenPositions {
  std::span<const std::int64_t> of_axis;  // axis_count(spec) entries
  const std::vector<int>* pair_axis;      // rotary_dim/2 entries
  std::int64_t of_pair(std::size_t i) const {
    return of_axis[static_cast<std::size_t>((*pair_axis)[i])];
  }
};

// form(theta, attention_factor, TokenPositions) -> the token's rotation, whatever its type;
// apply(rotation, head) rotates one head vector in place.
template <typename Form, typename Apply>
void rotate_every_head(const RopeSpec& spec, HeadTensor q, HeadTensor k, PositionIds positions,
                       Form form, Apply apply) {
  const std::vector<double> theta = inverse_frequencies(spec);
  const double scale = attention_factor(spec);
  const std::vector<int> pair_axis = pair_axes(spec.axes, spec.rotary_dim);
  const auto axes = static_cast<std::size_t>(axis_count(spec));
  for (std::int64_t t = 0; t < q.tokens; ++t) {
    const TokenPositions m{positions.subspan(static_cast<std::size_t>(t) * axes, axes), &pair_axis};
    const auto rotation = form(theta, scale, m);
    for (std::int64_t h = 0; h < q.heads; ++h) apply(rotation, q.row(t, h));
    for (std::int64_t h = 0; h < k.heads; ++h) apply(rotation, k.row(t, h));
  }
}

}  // namespace ropecheck::reference
