// What the RoPE properties share: out-of-place application through an implementation, the pair
// structure of a layout (the harness's own copy, independent of every implementation), and the
// per-element comparison with the oracle in units of the tolerance model.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "impls/rope_impl.h"

namespace ropecheck {

// Features (a, b) of rotary pair i in one head vector.
std::pair<std::size_t, std::size_t> pair_features(const RopeSpec& spec, int i);

// Where pair i of token t finds its position in a call's positions (token-major, axis_count(spec)
// per token: position_axes.h): t for one axis, t * axes + the pair's axis for several.
class PairPositions {
 public:
  explicit PairPositions(const RopeSpec& spec)
      : axes_(static_cast<std::size_t>(axis_count(spec))), axis_(pair_axes(spec.axes, spec.rotary_dim)) {}
  std::size_t operator()(std::size_t token, std::size_t pair) const {
    return token * axes_ + static_cast<std::size_t>(axis_[pair]);
  }
  std::size_t axes() const { return axes_; }

 private:
  std::size_t axes_;
  std::vector<int> axis_;
};

// |(a, b)| of two floats' values: in double a finite float's square neither overflows nor
// underflows, so the root of the sum is hypot's value to an ulp of double at a fraction of its
// cost (the model shapes' cases take tens of millions); hypot's rules (Inf wins over NaN) for the
// rest.
inline double pair_magnitude(double a, double b) {
  return std::isfinite(a) && std::isfinite(b) ? std::sqrt(a * a + b * b) : std::hypot(a, b);
}

// impl applied to a copy of x ([tokens][heads][head_dim]), guarded (guarded_apply.h).
std::vector<float> rotated(const RopeImpl& impl, const RopeSpec& spec, std::span<const float> x,
                           std::int64_t heads, std::span<const std::int64_t> positions);

// The element whose error against its bound is worst.
struct WorstElement {
  double ratio = 0.0;  // error / bound
  double error = 0.0;  // in units of eps32 * |pair|
  double bound = 0.0;
  std::string where;   // "token t head h feature j (pair i, position m)"
};

// Compares y (an implementation's output for input x) with `expected` (the oracle's output, in
// double) on the rotary features, per element, in units of eps32 * |input pair| (its
// unit_pair_norm for `storage`: tolerance.h), against the per-element bound
// `bound(position_index, theta_i, i)` (units), position_index the index in `positions` of the
// position pair i of the token rotates by: the token for one axis, t * axes + the pair's axis for
// a multi-axis spec (position_axes.h), so that a bound indexes any positions array of the call's
// shape. A zero input pair must give exact zeros. `positions` label the failure message (and give
// the token count); `first_token`, the call's index of x's first token, where x is a block of a
// larger call.
template <typename BoundFn>
WorstElement worst_rotary_error(const RopeSpec& spec, StorageType storage, std::span<const float> x,
                                std::span<const float> y, std::span<const double> expected,
                                std::int64_t heads, std::span<const std::int64_t> positions,
                                BoundFn bound, std::size_t first_token = 0);

// The unit of the per-element errors (tolerance.h).
inline constexpr std::string_view kPairUnits = "eps32*|pair|";

// Inside a RapidCheck property: fails the case, with the numbers and where, when worst.ratio > 1.
void fail_if_over(const WorstElement& worst, std::string_view what);

// Max over pass-through features of "bit pattern changed" (1) or not (0), with where.
WorstElement tail_changes(const RopeSpec& spec, std::span<const float> x, std::span<const float> y,
                          std::int64_t heads);

}  // namespace ropecheck

#include "properties/harness/rope_harness_impl.h"
