// The properties that define multi-axis RoPE (core/position_axes.h), beside every other RoPE
// property, which runs on multi-axis specs too (relative_position with a shift of its own per
// axis):
//   axes_equal_is_1d   MRoPE and interleaved MRoPE with every axis of a token at one position
//                      rotate as 1D RoPE at that position (a text token of Qwen2-VL and Qwen3-VL)
//   section_locality   moving one axis's positions changes only the pairs of that axis's section:
//                      every other pair stays within both calls' rotation bounds of its result
//                      before (its exact value has not moved; not its bits: a vectorised sin or
//                      cos may reduce a lane's argument by the path its neighbours' sizes pick,
//                      as PyTorch's does, an ulp apart)
//   ropecheck verify --property axes_equal_is_1d --impl mutant/mrope_frequencies_restarted
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "properties/harness/axis_generators.h"
#include "properties/harness/guarded_apply.h"
#include "properties/harness/rapidcheck_bridge.h"
#include "properties/harness/rope_cases.h"
#include "properties/harness/rope_harness.h"
#include "properties/catalogue.h"
#include "core/tolerance.h"

namespace ropecheck {
namespace {

// caps with only the multi-axis modes among `wanted` that it implements.
RopeCapabilities only_modes(RopeCapabilities caps, std::initializer_list<AxisMode> wanted) {
  std::erase_if(caps.axis_modes, [&](AxisMode m) {
    return std::find(wanted.begin(), wanted.end(), m) == wanted.end();
  });
  return caps;
}

PropertyResult axes_equal_is_1d(const Subject& subject, const RunConfig& config) {
  if (only_modes(subject.rope->capabilities(), {AxisMode::mrope, AxisMode::imrope}).axis_modes.empty()) {
    return skipped_result(subject, config, "no MRoPE or interleaved MRoPE");
  }
  return check_rope_property(subject, config, kPairUnits,
                             [&](auto& impl, auto& caps, auto& tracker) {
    QkCase c = pick_qk_case(only_modes(caps, {AxisMode::mrope, AxisMode::imrope}), Rotary::any);
    if (axis_count(c.spec) == 1) return;  // a 1D model shape's case: nothing of this property's
    // Every axis at the token's first position: a text token.
    const auto axes = static_cast<std::size_t>(axis_count(c.spec));
    std::vector<std::int64_t> one(static_cast<std::size_t>(c.tokens));
    for (std::size_t t = 0; t < one.size(); ++t) {
      one[t] = c.positions[t * axes];
      for (std::size_t a = 1; a < axes; ++a) c.positions[t * axes + a] = one[t];
    }
    RopeSpec plain = c.spec;
    plain.axes = {};
    std::vector<float> q = c.q, k = c.k, q1 = c.q, k1 = c.k;
    apply_guarded(impl, c.spec, q, c.q_heads, k, c.k_heads, c.positions);
    apply_guarded(impl, plain, q1, c.q_heads, k1, c.k_heads, one);
    // Each within rotation_bound_units of the same exact rotation (tolerance.h).
    const ErrorModel model = c.model();
    const auto bound = [&](std::size_t at, double theta, int pair) {
      return 2 * rotation_bound_units(model, one[at], theta, pair);
    };
    for (const auto& [name, x, got, want, heads] :
         {std::tuple{"q", &c.q, &q, &q1, c.q_heads}, std::tuple{"k", &c.k, &k, &k1, c.k_heads}}) {
      const std::vector<double> as_1d(want->begin(), want->end());
      const auto worst = worst_rotary_error(plain, c.storage, *x, *got, as_1d, heads, one, bound);
      tracker.observe(worst.error, worst.bound);
      fail_if_over(worst, fmt::format("{} with every axis at one position against 1D RoPE", name));
    }
  });
}

PropertyResult section_locality(const Subject& subject, const RunConfig& config) {
  if (only_modes(subject.rope->capabilities(), {AxisMode::mrope, AxisMode::imrope, AxisMode::vision})
          .axis_modes.empty()) {
    return skipped_result(subject, config, "no multi-axis RoPE");
  }
  return check_rope_property(subject, config, kPairUnits,
                             [&](auto& impl, auto& caps, auto& tracker) {
    const QkCase c = pick_qk_case(
        only_modes(caps, {AxisMode::mrope, AxisMode::imrope, AxisMode::vision}), Rotary::any);
    const int axes = axis_count(c.spec);
    if (axes == 1) return;  // a 1D model shape's case
    const int moved = *rc::gen::inRange(0, axes).as("the axis moved");
    const auto shift = *signed_position(position_limit(caps) / 2).as("its positions moved by");
    std::vector<std::int64_t> other = c.positions;
    for (std::size_t at = static_cast<std::size_t>(moved); at < other.size(); at += static_cast<std::size_t>(axes)) {
      other[at] += shift;
    }
    std::vector<float> q = c.q, k = c.k, q2 = c.q, k2 = c.k;
    apply_guarded(impl, c.spec, q, c.q_heads, k, c.k_heads, c.positions);
    apply_guarded(impl, c.spec, q2, c.q_heads, k2, c.k_heads, other);
    // The pairs of the other axes: each call within its rotation bound of the same exact value
    // (their positions did not move), so the two within the sum; the moved axis's pairs are
    // oracle_agreement's.
    const auto pair_axis = pair_axes(c.spec.axes, c.spec.rotary_dim);
    const ErrorModel model = c.model();
    const auto bound = [&](std::size_t at, double theta, int pair) {
      if (pair_axis[static_cast<std::size_t>(pair)] == moved) return double{INFINITY};  // oracle_agreement judges those
      return rotation_bound_units(model, c.positions[at], theta, pair) +
             rotation_bound_units(model, other[at], theta, pair);
    };
    for (const auto& [name, x, before, after, heads] :
         {std::tuple{"q", &c.q, &q, &q2, c.q_heads}, std::tuple{"k", &c.k, &k, &k2, c.k_heads}}) {
      const std::vector<double> as_before(before->begin(), before->end());
      const auto worst = worst_rotary_error(c.spec, c.storage, *x, *after, as_before, heads, other, bound);
      tracker.observe(worst.error, worst.bound);
      fail_if_over(worst, fmt::format("{} after axis {} moved by {}, against the call before", name, moved, shift));
    }
  });
}

}  // namespace

// This family's properties, in catalogue order (catalogue.cc lists the families).
std::span<const Property> multi_axis_properties() {
  static const Property kAll[] = {
      {"axes_equal_is_1d",
       "MRoPE and interleaved MRoPE with every axis at one position rotate as 1D RoPE there (a "
       "text token)",
       SubjectKind::rope, axes_equal_is_1d},
      {"section_locality",
       "moving one axis's positions changes only that axis's section of pairs (the others stay "
       "within both calls' bounds of their results before)",
       SubjectKind::rope, section_locality},
  };
  return kAll;
}

}  // namespace ropecheck
