// Properties of frequency scaling as implementations apply it (scaling.h): linear scaling is
// position interpolation, and the length-dependent kinds switch exactly past
// original_max_position. The scaled table itself is checked against the oracle's and against
// published values by tests (scaling_table_test, scaling_reference_test); oracle_agreement and
// norm_preservation run every kind through every implementation.
#include <fmt/format.h>

#include <cstring>

#include "properties/harness/rapidcheck_bridge.h"
#include "properties/harness/rope_cases.h"
#include "properties/harness/rope_harness.h"
#include "properties/catalogue.h"
#include "core/frequency.h"
#include "impls/oracle/oracle.h"
#include "core/tolerance.h"

namespace ropecheck {

PropertyResult linear_scaling_interpolates(const Subject& subject, const RunConfig& config) {
  if (!subject.rope->capabilities().implements(ScalingKind::linear)) {
    return skipped_result(subject, config, "no linear scaling");
  }
  return check_rope_property(subject, config, kPairUnits,
                             [&](auto& impl, auto& caps, auto& tracker) {
    QkCase c = pick_rotation_case(scalable(caps), Rotary::any);
    const auto factor = *rc::gen::inRange<std::int64_t>(2, 17).as("linear factor");
    RopeSpec plain = c.spec, scaled = c.spec;
    plain.scaling = {};
    scaled.scaling = {};
    scaled.scaling.kind = ScalingKind::linear;
    scaled.scaling.factor = static_cast<double>(factor);
    // Position s*k under factor s is position k unscaled: (s k) (theta / s) = k theta.
    std::vector<std::int64_t> k_positions(c.positions.size()), m_positions(c.positions.size());
    for (std::size_t t = 0; t < c.positions.size(); ++t) {
      k_positions[t] = c.positions[t] / factor;
      m_positions[t] = k_positions[t] * factor;
    }
    const auto y_scaled = rotated(impl, scaled, c.q, c.q_heads, m_positions);
    const auto y_plain = rotated(impl, plain, c.q, c.q_heads, k_positions);
    const std::vector<double> expected(y_plain.begin(), y_plain.end());
    const auto model_scaled = error_model(scaled, c.storage);
    const auto model_plain = error_model(plain, c.storage);
    // Both are within their bounds of the same exact rotation; theta here is the scaled one.
    const auto worst = worst_rotary_error(
        scaled, c.storage, c.q, y_scaled, expected, c.q_heads, m_positions,
        [&](std::size_t t, double theta, int pair) {
          const double unscaled = theta * static_cast<double>(factor);
          return rotation_bound_units(model_scaled, m_positions[t], theta, pair) +
                 rotation_bound_units(model_plain, k_positions[t], unscaled, pair);
        });
    tracker.observe(worst.error, worst.bound);
    fail_if_over(worst, fmt::format("linear factor {} at s*k vs plain at k", factor));
  });
}

PropertyResult scaling_boundary(const Subject& subject, const RunConfig& config) {
  // The kinds that switch at original_max_position, of those it implements.
  std::vector<ScalingKind> switching;
  for (const ScalingKind kind : {ScalingKind::dynamic_ntk, ScalingKind::longrope}) {
    if (subject.rope->capabilities().implements(kind)) switching.push_back(kind);
  }
  if (switching.empty()) return skipped_result(subject, config, "no dynamic NTK nor LongRoPE scaling");
  return check_rope_property(subject, config, kPairUnits,
                             [&](auto& impl, auto& caps, auto& tracker) {
    QkCase c = pick_qk_case(scalable(caps), Rotary::any);
    // A dynamic NTK or LongRoPE spec; sequence lengths L - 1, L, L + 1 around its L.
    const auto kind = *rc::gen::elementOf(switching).as("switching scaling");
    const RopeScaling scaling = *scaling_of(kind, c.spec.rotary_dim).as("scaling (replaces the spec's)");
    const std::int64_t max_l = scaling.original_max_position;
    std::vector<std::vector<float>> outputs;
    for (const std::int64_t length : {max_l - 1, max_l, max_l + 1}) {
      RopeSpec spec = c.spec;
      spec.scaling = scaling;
      spec.scaling.sequence_length = length;
      auto y = rotated(impl, spec, c.q, c.q_heads, c.positions);
      const auto model = error_model(spec, c.storage);
      const auto worst = worst_rotary_error(
          spec, c.storage, c.q, y, oracle_rope(spec, c.q, c.tokens, c.q_heads, c.positions), c.q_heads,
          c.positions,
          [&](std::size_t t, double theta, int pair) {
            return rotation_bound_units(model, c.positions[t], theta, pair);
          });
      tracker.observe(worst.error, worst.bound);
      fail_if_over(worst, fmt::format("sequence_length {} (original_max_position {})", length, max_l));
      outputs.push_back(std::move(y));
    }
    // At L - 1 and L nothing has switched yet: the same table, the same bits.
    if (std::memcmp(outputs[0].data(), outputs[1].data(), outputs[0].size() * sizeof(float)) != 0) {
      RC_FAIL(fmt::format("sequence lengths {} and {} (both <= original_max_position) rotate "
                          "differently",
                          max_l - 1, max_l));
    }
    if (scaling.kind == ScalingKind::dynamic_ntk) {
      // Unscaled frequencies, with the attention factor when the spec overrides it.
      RopeSpec plain = c.spec;
      plain.scaling = {};
      plain.scaling.attention_factor = scaling.attention_factor;
      const auto y_plain = rotated(impl, plain, c.q, c.q_heads, c.positions);
      if (std::memcmp(outputs[1].data(), y_plain.data(), y_plain.size() * sizeof(float)) != 0) {
        RC_FAIL(fmt::format("dynamic NTK at sequence_length {} = original_max_position differs "
                            "from unscaled RoPE",
                            max_l));
      }
    }
  });
}

// This family's properties, in catalogue order (catalogue.cc lists the families).
std::span<const Property> scaling_properties() {
  static const Property kAll[] = {
      {"linear_scaling_interpolates",
       "linear scaling by s at position s*k equals unscaled RoPE at k (position interpolation)",
       SubjectKind::rope, linear_scaling_interpolates},
      {"scaling_boundary",
       "dynamic NTK and LongRoPE at sequence length L-1, L, L+1 (L = original_max_position): "
       "oracle agreement, and nothing switches before L+1",
       SubjectKind::rope, scaling_boundary},
  };
  return kAll;
}

}  // namespace ropecheck
