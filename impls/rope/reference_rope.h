// What the scalar references share, and only that: the capabilities each of them claims, and the
// traversal "per token, form the rotation once, apply it to every q head and every k head" (GQA).
// How the rotation is formed and applied (a dense matrix, complex numbers, cos/sin halves) stays
// each reference's own: one bug must not hide in all of them (docs/checks.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/frequency.h"
#include "impls/rope_impl.h"

namespace ropecheck::reference {

// Both layouts, both angle precisions, partial rotary, scalar code, fp32 storage.
inline RopeCapabilities capabilities() {
  return {{Layout::interleaved, Layout::half_split},
          {AnglePrecision::fp32, AnglePrecision::fp64},
          true, "scalar", true, ""};
}

// form(theta, attention_factor, position) -> the token's rotation, whatever its type;
// apply(rotation, head) rotates one head vector in place.
template <typename Form, typename Apply>
void rotate_every_head(const RopeSpec& spec, HeadTensor q, HeadTensor k, PositionIds positions,
                       Form form, Apply apply) {
  const std::vector<double> theta = inverse_frequencies(spec);
  const double scale = attention_factor(spec);
  for (std::int64_t t = 0; t < q.tokens; ++t) {
    const auto rotation = form(theta, scale, positions[static_cast<std::size_t>(t)]);
    for (std::int64_t h = 0; h < q.heads; ++h) apply(rotation, q.row(t, h));
    for (std::int64_t h = 0; h < k.heads; ++h) apply(rotation, k.row(t, h));
  }
}

}  // namespace ropecheck::reference
