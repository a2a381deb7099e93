// What the kernel and storage tests share: the implementations that store a given type, and the
// norm of the rotary pair an output element belongs to (the tolerance model's unit), computed
// here from the layout on its own, independently of every implementation.
#pragma once

#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

#include "impls/registry.h"

namespace ropecheck::test {

// Every registered implementation whose capabilities().storage is `storage` (available or not).
inline std::vector<const RopeImpl*> implementations_storing(StorageType storage) {
  std::vector<const RopeImpl*> found;
  for (const RopeImpl* impl : rope_implementations()) {
    if (impl->capabilities().storage == storage) found.push_back(impl);
  }
  return found;
}

// Element j of a [rows][head_dim] tensor x: its feature, and, for a rotary feature, the norm of
// its input pair (features 2i, 2i+1 interleaved; i, i + rotary_dim/2 half-split).
struct RotaryElement {
  int feature = 0;
  bool rotary = false;  // false: a pass-through feature past rotary_dim
  double pair_norm = 0;
};

inline RotaryElement rotary_element(const RopeSpec& spec, std::span<const float> x, std::size_t j) {
  const auto dim = static_cast<std::size_t>(spec.head_dim);
  const auto f = static_cast<int>(j % dim);
  if (f >= spec.rotary_dim) return {f, false, 0};
  const bool interleaved = spec.layout == Layout::interleaved;
  const int half = spec.rotary_dim / 2;
  const int i = interleaved ? f / 2 : f % half;
  const std::size_t row = j - static_cast<std::size_t>(f);
  const auto a = row + static_cast<std::size_t>(interleaved ? 2 * i : i);
  const auto b = row + static_cast<std::size_t>(interleaved ? 2 * i + 1 : i + half);
  return {f, true, std::hypot(static_cast<double>(x[a]), static_cast<double>(x[b]))};
}

}  // namespace ropecheck::test
