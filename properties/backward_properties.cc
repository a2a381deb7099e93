// RoPE's backward pass (spec.h, Pass): the gradient dx = a R(m)^T dy, judged on every
// implementation that declares it. The forward's pointwise checks run on the gradient
// (pointwise_checks.h: the oracle's transposed rotation, the norm, the tail), and two relations
// tie it to the same implementation's forward, so that a backward written apart from its forward
// cannot drift from it: the adjoint identity <a R x, y> = <x, a R^T y> and R^T R x = x (times a^2).
// The bounds add the error bounds of each rotation involved (tolerance.h), as the group
// properties do.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "core/frequency.h"
#include "core/tolerance.h"
#include "properties/catalogue.h"
#include "properties/harness/rapidcheck_bridge.h"
#include "properties/harness/rope_cases.h"
#include "properties/harness/rope_harness.h"
#include "properties/pointwise_checks.h"

namespace ropecheck {
namespace {

constexpr std::string_view kNoBackward = "no backward pass: it declares the forward only";

bool has_backward(const Subject& subject) {
  return subject.rope != nullptr && subject.rope->capabilities().implements(Pass::backward);
}

// Runs `check` on subjects with a backward; skips the others with the reason (an unavailable
// subject keeps its own reason: the check skips it first).
template <typename Check>
PropertyResult on_backward(const Subject& subject, const RunConfig& config, Check check) {
  if (subject.rope != nullptr && subject.rope->capabilities().available && !has_backward(subject)) {
    return skipped_result(subject, config, std::string(kNoBackward));
  }
  return check();
}

RopeSpec backward_of(const RopeSpec& spec) {
  RopeSpec backward = spec;
  backward.pass = Pass::backward;
  return backward;
}

PropertyResult backward_oracle_agreement(const Subject& subject, const RunConfig& config) {
  return on_backward(subject, config,
                     [&] { return check_oracle_agreement(subject, config, Pass::backward); });
}

PropertyResult backward_norm_preservation(const Subject& subject, const RunConfig& config) {
  return on_backward(subject, config,
                     [&] { return check_norm_preservation(subject, config, Pass::backward); });
}

PropertyResult backward_tail_untouched(const Subject& subject, const RunConfig& config) {
  return on_backward(subject, config,
                     [&] { return check_tail_untouched(subject, config, Pass::backward); });
}

// One head row's <forward(x), y> and <x, backward(y)> over all head_dim features, in double, and
// the bound on their difference. Per rotary pair p, the forward's error vector is at most
// P_f eps32 u|x_p| and the backward's P_b eps32 u|y_p| (pair_error_bound_units, u| | the unit
// pair norm), so by Cauchy-Schwarz
//   |<Rx, y> - <x, R^T y>| <= eps32 sum_p u|x_p| u|y_p| (P_f + P_b)
// plus the two double sums' own rounding, gamma64(head_dim) of their absolute terms (each term a
// product of two floats, exact in double). The tail enters both sides unchanged: its products
// must cancel, which is what sees a backward that drops the tail's gradient.
struct AdjointRow {
  double difference = 0;
  double bound = 0;   // absolute
  double weight = 0;  // eps32 (sum_p u|x_p| u|y_p| + sum_tail |x_j y_j|): the unit of the error
};

AdjointRow adjoint_row(const RopeSpec& spec, const ErrorModel& model, std::span<const float> x,
                       std::span<const float> rx, std::span<const float> y,
                       std::span<const float> rty, std::span<const double> unit_x,
                       std::span<const double> unit_y, std::span<const std::int64_t> pair_position,
                       const std::vector<double>& theta) {
  double forward_dot = 0, backward_dot = 0, magnitude = 0;
  for (std::size_t j = 0; j < x.size(); ++j) {
    forward_dot += static_cast<double>(rx[j]) * y[j];
    backward_dot += static_cast<double>(x[j]) * rty[j];
    magnitude += std::abs(static_cast<double>(rx[j]) * y[j]) + std::abs(static_cast<double>(x[j]) * rty[j]);
  }
  AdjointRow row;
  double rotary_bound = 0, rotary_weight = 0;
  for (std::size_t i = 0; i < theta.size(); ++i) {
    const int pair = static_cast<int>(i);
    const double units = pair_error_bound_units(model, pair_position[i], theta[i], pair);
    const double w = unit_x[i] * unit_y[i];
    rotary_bound += 2 * units * w;  // the forward's P_f and the backward's P_b: one model
    rotary_weight += w;
  }
  double tail_weight = 0;
  for (std::size_t j = static_cast<std::size_t>(spec.rotary_dim); j < x.size(); ++j) {
    tail_weight += std::abs(static_cast<double>(x[j]) * y[j]);
  }
  constexpr double kUnitRoundoff64 = std::numeric_limits<double>::epsilon() / 2;
  const auto n = static_cast<double>(x.size());
  const double gamma64 = n * kUnitRoundoff64 / (1 - n * kUnitRoundoff64);
  row.difference = std::abs(forward_dot - backward_dot);
  row.bound = kEps32 * rotary_bound + gamma64 * magnitude;
  row.weight = kEps32 * (rotary_weight + tail_weight);
  return row;
}

PropertyResult adjoint_identity(const Subject& subject, const RunConfig& config) {
  return on_backward(subject, config, [&] {
    return check_rope_property(subject, config, "eps32*sum|x_p||y_p|",
                               [&](auto& impl, auto& caps, auto& tracker) {
      // The attention factor stays: a R and a R^T are adjoint too, and a gradient without a is not.
      const QkCase c = pick_qk_case(caps, Rotary::any);
      std::vector<float> dy = pick_tensor(c.spec, c.tokens, c.q_heads, c.storage, "dy (the gradient)");
      round_to_storage(dy, c.storage);
      const auto rx = rotated(impl, c.spec, c.q, c.q_heads, c.positions);
      const auto rty = rotated(impl, backward_of(c.spec), dy, c.q_heads, c.positions);

      const auto theta = inverse_frequencies(c.spec);
      const auto unit_x = unit_pair_norms(c.spec, c.storage, c.q);
      const auto unit_y = unit_pair_norms(c.spec, c.storage, dy);
      const auto model = c.model();
      const PairPositions at(c.spec);
      const auto dim = static_cast<std::size_t>(c.spec.head_dim);
      const auto pairs = theta.size();
      std::vector<std::int64_t> pair_position(pairs);
      for (std::size_t row = 0; row < c.q.size() / dim; ++row) {
        const std::size_t t = row / static_cast<std::size_t>(c.q_heads);
        for (std::size_t i = 0; i < pairs; ++i) pair_position[i] = c.positions[at(t, i)];
        const auto slice = [&](const auto& v) { return std::span(v).subspan(row * dim, dim); };
        const AdjointRow r = adjoint_row(c.spec, model, slice(c.q), slice(rx), slice(dy), slice(rty),
                                         std::span(unit_x).subspan(row * pairs, pairs),
                                         std::span(unit_y).subspan(row * pairs, pairs), pair_position, theta);
        double units = r.weight > 0 ? r.difference / r.weight : (r.difference == 0 ? 0.0 : INFINITY);
        if (std::isnan(units)) units = INFINITY;
        const double limit = r.weight > 0 ? r.bound / r.weight : 0.0;
        tracker.observe(units, limit);
        if (units > limit) {
          RC_FAIL(fmt::format("q row {} (token {}, head {}): <R x, dy> and <x, R^T dy> differ by {:.4g} "
                              "eps32*sum|x_p||y_p|, bound {:.4g} (a = {})",
                              row, t, row % static_cast<std::size_t>(c.q_heads), units, limit,
                              attention_factor(c.spec)));
        }
      }
    });
  });
}

PropertyResult backward_inverts_forward(const Subject& subject, const RunConfig& config) {
  return on_backward(subject, config, [&] {
    return check_rope_property(subject, config, kPairUnits,
                               [&](auto& impl, auto& caps, auto& tracker) {
      // a R^T (a R x) = a^2 x. The forward's error vector (P_f, pair_error_bound_units) is rotated
      // and scaled by a; the backward's own error (its rotation bound) is in units of its input
      // pair a|x_p|, at most max(1, a) of x's unit pair norm (tolerance.h's unit_pair_norm).
      const QkCase c = pick_qk_case(caps, Rotary::any);
      const double a = attention_factor(c.spec);
      const auto back = rotated(impl, backward_of(c.spec),
                                rotated(impl, c.spec, c.q, c.q_heads, c.positions), c.q_heads, c.positions);
      std::vector<double> expected(c.q.size());
      for (std::size_t j = 0; j < c.q.size(); ++j) expected[j] = a * a * static_cast<double>(c.q[j]);
      const auto p = c.model();
      const auto worst = worst_rotary_error(
          c.spec, c.storage, c.q, back, expected, c.q_heads, c.positions,
          [&](std::size_t t, double theta, int pair) {
            return a * pair_error_bound_units(p, c.positions[t], theta, pair) +
                   std::max(1.0, a) * rotation_bound_units(p, c.positions[t], theta, pair);
          });
      tracker.observe(worst.error, worst.bound);
      fail_if_over(worst, "a R_m^T (a R_m x) vs a^2 x");
    });
  });
}

}  // namespace

// This family's properties, in catalogue order (catalogue.cc lists the families).
std::span<const Property> backward_properties() {
  static const Property kAll[] = {
      {"backward_oracle_agreement",
       "the gradient a R_m^T dy: every element within the derived bound of the float64 oracle",
       SubjectKind::rope, backward_oracle_agreement},
      {"adjoint_identity",
       "<a R_m x, dy> = <x, a R_m^T dy> per head: the backward is the forward's adjoint",
       SubjectKind::rope, adjoint_identity},
      {"backward_inverts_forward", "a R_m^T (a R_m x) = a^2 x: the backward undoes the forward",
       SubjectKind::rope, backward_inverts_forward},
      {"backward_norm_preservation", "each rotary pair of the gradient keeps its norm (times a)",
       SubjectKind::rope, backward_norm_preservation},
      {"backward_tail_untouched",
       "the gradient of the features past rotary_dim passes through bit for bit",
       SubjectKind::rope, backward_tail_untouched},
  };
  return kAll;
}

}  // namespace ropecheck
