// What the bound tightness tests share (tests/impls/*tightness_test.cc): a sweep of a rotation
// against the oracle, as the properties measure it, giving its worst error as a fraction of a
// bound, and the check that the fraction is at least half and at most all of it.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/frequency.h"
#include "core/storage.h"
#include "core/tolerance.h"
#include "impls/oracle/oracle.h"
#include "impls/registry.h"

namespace ropecheck::test {

inline const RopeImpl& tight_rope_impl(std::string_view id) {
  const RopeImpl* impl = find_rope(id);
  if (impl == nullptr) throw std::logic_error(std::string(id) + " is not registered");
  return *impl;
}

// A sweep's worst error as a fraction of its bound, and where it was.
struct Reached {
  double fraction = 0.0;
  std::int64_t position = 0;
  int pair = -1;
};

// The bound, in units, of pair `pair` (inverse frequency theta) at position m.
using TightBoundOf = std::function<double(std::int64_t m, double theta, int pair)>;

// A rotation in place of q (one tensor), as RopeImpl::apply does: a registered implementation's,
// or a test's own formation of the angles.
using TightRotation = std::function<void(const RopeSpec&, HeadTensor, PositionIds)>;

// What is measured of a rotated pair: the worse element's error, the norm of its error vector, or
// the change of its norm (| |y| - a |x| |).
enum class PairMeasure { element, error_vector, norm_change };

// Rotates seeded normal inputs (times `scale`, rounded to `storage`: the oracle rotates the
// stored values) at `positions` with `heads` heads, and returns the worst error over the bound,
// in units of eps32 * unit_pair_norm (tolerance.h).
inline Reached rope_sweep(const TightRotation& rotate, StorageType storage, const RopeSpec& spec,
                          const std::vector<std::int64_t>& positions, std::int64_t heads, float scale,
                          const TightBoundOf& bound, PairMeasure measure = PairMeasure::element,
                          unsigned seed = 29) {
  const auto tokens = static_cast<std::int64_t>(positions.size());
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> x(static_cast<std::size_t>(tokens * heads * spec.head_dim));
  for (float& v : x) v = round_to_storage(scale * normal(rng), storage);
  std::vector<float> y = x;
  rotate(spec, HeadTensor{y, tokens, heads, spec.head_dim}, positions);
  const auto exact = oracle_rope(spec, x, tokens, heads, positions);
  const auto theta = inverse_frequencies(spec);
  const double a = attention_factor(spec);
  const auto dim = static_cast<std::size_t>(spec.head_dim);
  const int half = spec.rotary_dim / 2;
  const bool interleaved = spec.layout == Layout::interleaved;
  Reached worst;
  for (std::size_t row = 0; row < x.size() / dim; ++row) {
    const std::int64_t m = positions[row / static_cast<std::size_t>(heads)];
    for (int i = 0; i < half; ++i) {
      const std::size_t ia = row * dim + static_cast<std::size_t>(interleaved ? 2 * i : i);
      const std::size_t ib = row * dim + static_cast<std::size_t>(interleaved ? 2 * i + 1 : i + half);
      const double norm = std::hypot(double{x[ia]}, double{x[ib]});
      if (norm == 0) continue;
      const double unit = kEps32 * unit_pair_norm(storage, a, norm);
      const double ea = y[ia] - exact[ia], eb = y[ib] - exact[ib];
      double error = std::max(std::abs(ea), std::abs(eb));
      if (measure == PairMeasure::error_vector) error = std::hypot(ea, eb);
      if (measure == PairMeasure::norm_change) {
        error = std::abs(std::hypot(double{y[ia]}, double{y[ib]}) - a * norm);
      }
      const double fraction = error / unit / bound(m, theta[static_cast<std::size_t>(i)], i);
      if (fraction > worst.fraction) worst = {fraction, m, i};
    }
  }
  return worst;
}

// The same sweep of a registered implementation, on the storage it declares.
inline Reached rope_sweep(const RopeImpl& impl, const RopeSpec& spec, const std::vector<std::int64_t>& positions,
                          std::int64_t heads, float scale, const TightBoundOf& bound,
                          PairMeasure measure = PairMeasure::element, unsigned seed = 29) {
  const TightRotation rotate = [&impl](const RopeSpec& s, HeadTensor x, PositionIds p) { impl.apply(s, x, p); };
  return rope_sweep(rotate, impl.capabilities().storage, spec, positions, heads, scale, bound, measure, seed);
}

inline std::vector<std::int64_t> positions_from(std::int64_t first, std::int64_t count, std::int64_t step = 1) {
  std::vector<std::int64_t> out;
  for (std::int64_t k = 0; k < count; ++k) out.push_back(first + k * step);
  return out;
}

// At least `least` of the bound reached (0.5 unless the bound's docs say why a correct
// implementation cannot get there), the bound kept; the fraction goes to the test's XML.
inline void expect_tight(const std::string& what, const Reached& r, double least = 0.5) {
  ::testing::Test::RecordProperty(what, std::to_string(r.fraction));
  EXPECT_LE(r.fraction, 1.0) << what << ": over its bound at m " << r.position << " pair " << r.pair;
  EXPECT_GE(r.fraction, least) << what << ": the sweep's worst, at m " << r.position << " pair "
                               << r.pair << ", is under " << least << " of the bound: doubled, it would still pass";
}

inline TightBoundOf rotation_bound(const RopeSpec& spec, StorageType storage) {
  const ErrorModel model = error_model(spec, storage);
  return [model](std::int64_t m, double theta, int pair) { return rotation_bound_units(model, m, theta, pair); };
}

// rotation_bound at the pairs `keep` accepts only (the others' bound is infinite: they count 0).
inline TightBoundOf rotation_bound_at(const RopeSpec& spec, const std::function<bool(int pair)>& keep) {
  const TightBoundOf bound = rotation_bound(spec, StorageType::fp32);
  return [bound, keep](std::int64_t m, double theta, int pair) {
    return keep(pair) ? bound(m, theta, pair) : std::numeric_limits<double>::infinity();
  };
}

// Rotates every fp32 pair of x by the angle `angle(m, i)` a test's formation gives (an fp32
// angle): cos and sin rounded once from double, then the fp32 products and sums of a rotation
// matrix, times float(attention factor) when it is not 1. What differs from a real fp32-angle
// implementation is only how the angle was formed.
inline void rotate_by_angles(const RopeSpec& spec, HeadTensor x, PositionIds positions,
                             const std::function<float(std::int64_t m, int pair)>& angle) {
  const auto dim = static_cast<std::size_t>(spec.head_dim);
  const std::size_t half = static_cast<std::size_t>(spec.rotary_dim / 2);
  const auto a = static_cast<float>(attention_factor(spec));
  for (std::int64_t t = 0; t < x.tokens; ++t) {
    const std::int64_t m = positions[static_cast<std::size_t>(t)];
    for (std::size_t i = 0; i < half; ++i) {
      const double phi = angle(m, static_cast<int>(i));
      float c = static_cast<float>(std::cos(phi)), s = static_cast<float>(std::sin(phi));
      if (a != 1.0f) c *= a, s *= a;
      for (std::int64_t h = 0; h < x.heads; ++h) {
        float* head = x.data.data() + static_cast<std::size_t>(t * x.heads + h) * dim;
        const std::size_t ia = spec.layout == Layout::interleaved ? 2 * i : i;
        const std::size_t ib = spec.layout == Layout::interleaved ? 2 * i + 1 : i + half;
        const float xa = head[ia], xb = head[ib];
        head[ia] = xa * c - xb * s;
        head[ib] = xa * s + xb * c;
      }
    }
  }
}

}  // namespace ropecheck::test
