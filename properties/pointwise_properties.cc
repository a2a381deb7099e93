// RoPE properties of one rotation: agreement with the oracle, norm preservation, identity at
// position 0, and the untouched pass-through tail. The first, second and fourth are also run on
// the backward pass's gradient (pointwise_checks.h, backward_properties.cc).
#include <fmt/format.h>

#include <cmath>

#include "properties/harness/guarded_apply.h"
#include "properties/harness/rapidcheck_bridge.h"
#include "properties/harness/rope_cases.h"
#include "properties/harness/rope_harness.h"
#include "properties/catalogue.h"
#include "properties/pointwise_checks.h"
#include "core/frequency.h"
#include "core/tolerance.h"

namespace ropecheck {
namespace {

// q and k rotated together through the two-tensor form (the GQA path), guarded.
void apply_qk(const RopeImpl& impl, const QkCase& c, std::vector<float>& q, std::vector<float>& k,
              Evidence evidence = Evidence::rotation) {
  q = c.q;
  k = c.k;
  apply_guarded(impl, c.spec, q, c.q_heads, k, c.k_heads, c.positions, evidence);
}

}  // namespace

PropertyResult check_oracle_agreement(const Subject& subject, const RunConfig& config, Pass pass) {
  return check_rope_property(subject, config, kPairUnits,
                             [&](auto& impl, auto& caps, auto& tracker) {
    const QkCase c = pick_qk_case(caps, Rotary::any, pass);
    std::vector<float> q, k;
    apply_qk(impl, c, q, k);
    const auto [worst, tensor] = worst_against_oracle(c, q, k);
    tracker.observe(worst.error, worst.bound);
    fail_if_over(worst, tensor);
  });
}

PropertyResult check_norm_preservation(const Subject& subject, const RunConfig& config, Pass pass) {
  return check_rope_property(subject, config, kPairUnits,
                             [&](auto& impl, auto& caps, auto& tracker) {
    const QkCase c = pick_qk_case(caps, Rotary::any, pass);
    std::vector<float> q, k;
    apply_qk(impl, c, q, k);
    // |R_m x| = a |x|, a the attention factor (1 unless YaRN/LongRoPE or an override scale it);
    // the gradient's |R_m^T dy| = a |dy| likewise.
    const double a = attention_factor(c.spec);
    const auto before = pair_norms(c.spec, c.q);
    const auto unit = unit_pair_norms(c.spec, c.storage, c.q);
    const auto after = pair_norms(c.spec, q);
    double worst = 0;
    std::size_t worst_pair = 0;
    for (std::size_t p = 0; p < before.size(); ++p) {
      const double diff = std::abs(after[p] - a * before[p]);
      double units = before[p] > 0 ? diff / (kEps32 * unit[p]) : (diff == 0 ? 0 : INFINITY);
      if (std::isnan(units)) units = INFINITY;
      if (units > worst) {
        worst = units;
        worst_pair = p;
      }
    }
    const double limit = norm_bound_units(c.model());
    tracker.observe(worst, limit);
    if (worst > limit) {
      const auto pairs = static_cast<std::size_t>(c.spec.rotary_dim / 2);
      RC_FAIL(fmt::format("pair {} of q row {} (position {}): |x| = {:.9g} became {:.9g} (a = {}), "
                          "{:.4g} > {:.4g} {}",
                          worst_pair % pairs, worst_pair / pairs,
                          c.positions[PairPositions(c.spec)(
                              worst_pair / pairs / static_cast<std::size_t>(c.q_heads), worst_pair % pairs)],
                          before[worst_pair], after[worst_pair], a, worst, limit, kPairUnits));
    }
  });
}

PropertyResult identity_at_zero(const Subject& subject, const RunConfig& config) {
  return check_rope_property(subject, config, kPairUnits,
                             [&](auto& impl, auto& caps, auto& tracker) {
    QkCase c = pick_rotation_case(caps, Rotary::any);
    c.positions.assign(c.positions.size(), 0);
    std::vector<float> q, k;
    apply_qk(impl, c, q, k, Evidence::input);  // position 0 is the point here
    // cos 0 = 1 and sin 0 = 0 exactly, so every form of the rotation returns x exactly: bound 0.
    const std::vector<double> expected_q(c.q.begin(), c.q.end());
    const auto worst = worst_rotary_error(c.spec, c.storage, c.q, q, expected_q, c.q_heads, c.positions,
                                          [](std::size_t, double, int) { return 0.0; });
    tracker.observe(worst.error, 0.0);
    if (worst.error > 0) RC_FAIL(fmt::format("R_0 changed q: {}", worst.where));
  });
}

PropertyResult check_tail_untouched(const Subject& subject, const RunConfig& config, Pass pass) {
  if (!subject.rope->capabilities().partial_rotary) {
    return skipped_result(subject, config, "partial rotary not supported");
  }
  return check_rope_property(subject, config, "changed bits",
                             [&](auto& impl, auto& caps, auto& tracker) {
    const QkCase c = pick_qk_case(caps, Rotary::partial, pass);
    std::vector<float> q, k;
    apply_qk(impl, c, q, k);
    for (const auto& [in, out, heads] : {std::tuple{&c.q, &q, c.q_heads}, {&c.k, &k, c.k_heads}}) {
      const auto changed = tail_changes(c.spec, *in, *out, heads);
      tracker.observe(changed.error, 0.0);
      if (changed.error > 0) RC_FAIL(changed.where);
    }
  });
}

namespace {

PropertyResult oracle_agreement(const Subject& subject, const RunConfig& config) {
  return check_oracle_agreement(subject, config, Pass::forward);
}
PropertyResult norm_preservation(const Subject& subject, const RunConfig& config) {
  return check_norm_preservation(subject, config, Pass::forward);
}
PropertyResult tail_untouched(const Subject& subject, const RunConfig& config) {
  return check_tail_untouched(subject, config, Pass::forward);
}

}  // namespace

// This family's properties, in catalogue order (catalogue.cc lists the families).
std::span<const Property> pointwise_properties() {
  static const Property kAll[] = {
      {"oracle_agreement",
       "every rotated element within the derived bound of the float64 oracle (DESIGN tolerance model)",
       SubjectKind::rope, oracle_agreement},
      {"norm_preservation", "each rotary pair keeps its norm: a rotation is orthogonal (seed 004)",
       SubjectKind::rope, norm_preservation},
      {"identity_at_zero", "position 0 leaves every feature exactly unchanged (R_0 = I)",
       SubjectKind::rope, identity_at_zero},
      {"tail_untouched", "features past rotary_dim pass through bit for bit (partial rotary)",
       SubjectKind::rope, tail_untouched},
  };
  return kAll;
}

}  // namespace ropecheck
