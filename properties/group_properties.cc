// RoPE properties of the rotation group: inverse, composition, and relative position (the
// reason RoPE exists: q.k depends on n - m only). Each bound adds the error bounds of every
// rotation on both sides (tolerance.h); a rotation applied after an error can move the pair's
// whole error vector into one element, hence pair_error_bound_units for the inner rotation.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "properties/harness/rapidcheck_bridge.h"
#include "properties/harness/rope_cases.h"
#include "properties/harness/rope_harness.h"
#include "properties/catalogue.h"
#include "core/frequency.h"
#include "core/tolerance.h"

namespace ropecheck {
namespace {

std::vector<std::int64_t> negated(const std::vector<std::int64_t>& m) {
  std::vector<std::int64_t> out(m.size());
  for (std::size_t t = 0; t < m.size(); ++t) out[t] = -m[t];
  return out;
}

std::vector<std::int64_t> sum(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
  std::vector<std::int64_t> out(a.size());
  for (std::size_t t = 0; t < a.size(); ++t) out[t] = a[t] + b[t];
  return out;
}

}  // namespace

PropertyResult inverse(const Subject& subject, const RunConfig& config) {
  return check_rope_property(subject, config, kPairUnits,
                             [&](auto& impl, auto& caps, auto& tracker) {
    const QkCase c = pick_rotation_case(caps, Rotary::any);
    const auto back = rotated(impl, c.spec, rotated(impl, c.spec, c.q, c.q_heads, c.positions),
                              c.q_heads, negated(c.positions));
    const std::vector<double> expected(c.q.begin(), c.q.end());
    const auto p = c.model();
    const auto worst = worst_rotary_error(
        c.spec, c.storage, c.q, back, expected, c.q_heads, c.positions, [&](std::size_t t, double theta, int pair) {
          return pair_error_bound_units(p, c.positions[t], theta, pair) +
                 rotation_bound_units(p, -c.positions[t], theta, pair);
        });
    tracker.observe(worst.error, worst.bound);
    fail_if_over(worst, "R_-m R_m x vs x");
  });
}

PropertyResult composition(const Subject& subject, const RunConfig& config) {
  return check_rope_property(subject, config, kPairUnits,
                             [&](auto& impl, auto& caps, auto& tracker) {
    const QkCase c = pick_rotation_case(caps, Rotary::any);
    const auto& m = c.positions;
    const auto n = *position_ids(m.size(), position_limit(caps)).as("positions n (R_m R_n = R_(m+n))");
    const auto m_plus_n = sum(m, n);
    const auto twice = rotated(impl, c.spec, rotated(impl, c.spec, c.q, c.q_heads, n), c.q_heads, m);
    const auto once = rotated(impl, c.spec, c.q, c.q_heads, m_plus_n);
    const std::vector<double> expected(once.begin(), once.end());
    const auto p = c.model();
    const auto worst = worst_rotary_error(
        c.spec, c.storage, c.q, twice, expected, c.q_heads, m_plus_n, [&](std::size_t t, double theta, int pair) {
          return pair_error_bound_units(p, n[t], theta, pair) +
                 rotation_bound_units(p, m[t], theta, pair) +
                 rotation_bound_units(p, m_plus_n[t], theta, pair);
        });
    tracker.observe(worst.error, worst.bound);
    fail_if_over(worst, "R_m R_n x vs R_(m+n) x");
  });
}

namespace {

// Dot products of q heads with their kv head over the rotary features, with the error bound of
// each from the tolerance model: for pair errors |e_q| <= P_q eps|q_p| and |e_k| <= P_k eps|k_p|,
//   |<q', k'> - <q, k>| <= eps * sum_p |q_p||k_p| (P_q + P_k + eps P_q P_k).
// Only rotary features enter: the tail's products are identical on both sides, and leaving them
// out keeps double accumulation error (~2^-53 of the tail's magnitude) out of the comparison.
struct Scores {
  std::vector<double> value;   // [tokens][q_heads]
  std::vector<double> bound;   // same, absolute
  std::vector<double> weight;  // eps32 * sum_p |q_p||k_p|: the unit of the error
};

Scores scores(const QkCase& c, const std::vector<float>& q, const std::vector<float>& k,
              const std::vector<std::int64_t>& q_pos, const std::vector<std::int64_t>& k_pos) {
  const auto theta = inverse_frequencies(c.spec);
  const auto q_norms = unit_pair_norms(c.spec, c.storage, c.q);
  const auto k_norms = unit_pair_norms(c.spec, c.storage, c.k);
  const auto dim = static_cast<std::size_t>(c.spec.head_dim);
  const auto pairs = theta.size();
  const auto p = c.model();
  const PairPositions at(c.spec);
  Scores s;
  for (std::size_t t = 0; t < static_cast<std::size_t>(c.tokens); ++t) {
    for (std::int64_t h = 0; h < c.q_heads; ++h) {
      const std::size_t qrow = t * static_cast<std::size_t>(c.q_heads) + static_cast<std::size_t>(h);
      const std::size_t krow = t * static_cast<std::size_t>(c.k_heads) + static_cast<std::size_t>(h / c.group());
      double dot = 0, bound = 0, weight = 0;
      for (std::size_t i = 0; i < pairs; ++i) {
        const auto [a, b] = pair_features(c.spec, static_cast<int>(i));
        dot += static_cast<double>(q[qrow * dim + a]) * k[krow * dim + a] +
               static_cast<double>(q[qrow * dim + b]) * k[krow * dim + b];
        const double w = q_norms[qrow * pairs + i] * k_norms[krow * pairs + i];
        const int pair = static_cast<int>(i);
        const double pq = q_pos.empty() ? 0.0 : pair_error_bound_units(p, q_pos[at(t, i)], theta[i], pair);
        const double pk = pair_error_bound_units(p, k_pos[at(t, i)], theta[i], pair);
        bound += w * (pq + pk + kEps32 * pq * pk);
        weight += w;
      }
      s.value.push_back(dot);
      s.bound.push_back(kEps32 * bound);
      s.weight.push_back(kEps32 * weight);
    }
  }
  return s;
}

}  // namespace

PropertyResult relative_position(const Subject& subject, const RunConfig& config) {
  return check_rope_property(subject, config, "eps32*sum|q_p||k_p|",
                             [&](auto& impl, auto& caps, auto& tracker) {
    const QkCase c = pick_rotation_case(caps, Rotary::any);
    const auto& m = c.positions;  // query positions
    const auto n = *position_ids(m.size(), position_limit(caps)).as("key positions n");
    // One shift per axis (a multi-axis spec's t, h, w each move on their own: position_axes.h).
    const auto axes = static_cast<std::size_t>(axis_count(c.spec));
    const auto shift = *rc::gen::container<std::vector<std::int64_t>>(axes, signed_position(position_limit(caps)))
                            .as(axes == 1 ? "shift c" : "shift c of each axis");
    std::vector<std::int64_t> shifts(m.size());
    for (std::size_t at = 0; at < shifts.size(); ++at) shifts[at] = shift[at % axes];
    const auto n_minus_m = sum(n, negated(m));

    const auto s_mn = scores(c, rotated(impl, c.spec, c.q, c.q_heads, m),
                             rotated(impl, c.spec, c.k, c.k_heads, n), m, n);
    const auto s_rel = scores(c, c.q, rotated(impl, c.spec, c.k, c.k_heads, n_minus_m), {}, n_minus_m);
    const auto m_c = sum(m, shifts), n_c = sum(n, shifts);
    const auto s_shift = scores(c, rotated(impl, c.spec, c.q, c.q_heads, m_c),
                                rotated(impl, c.spec, c.k, c.k_heads, n_c), m_c, n_c);

    for (const auto& [other, label] : {std::pair{&s_rel, "<q, R_(n-m) k>"},
                                       std::pair{&s_shift, "<R_(m+c) q, R_(n+c) k>"}}) {
      for (std::size_t j = 0; j < s_mn.value.size(); ++j) {
        const double diff = std::abs(s_mn.value[j] - other->value[j]);
        const double limit = s_mn.bound[j] + other->bound[j];
        const double w = s_mn.weight[j];
        const double error = w > 0 ? diff / w : (diff == 0 ? 0 : INFINITY);
        const double bound = w > 0 ? limit / w : 0;
        tracker.observe(std::isnan(error) ? INFINITY : error, bound);
        if (!(diff <= limit)) {
          const auto t = j / static_cast<std::size_t>(c.q_heads);
          const auto of_token = [&](const std::vector<std::int64_t>& p) {
            return fmt::format("{}", fmt::join(std::span(p).subspan(t * axes, axes), ","));
          };
          RC_FAIL(fmt::format("<R_m q, R_n k> = {:.17g} but {} = {:.17g} (token {}, q head {}, "
                              "m = {}, n = {}, c = {}): error {:.4g} > bound {:.4g} units",
                              s_mn.value[j], label, other->value[j], t,
                              j % static_cast<std::size_t>(c.q_heads), of_token(m), of_token(n),
                              fmt::join(shift, ","), error, bound));
        }
      }
    }
  });
}

// This family's properties, in catalogue order (catalogue.cc lists the families).
std::span<const Property> group_properties() {
  static const Property kAll[] = {
      {"inverse", "rotating by m then by -m gives x back: R_-m R_m = I", SubjectKind::rope,
         inverse},
      {"composition", "rotating by n then by m equals rotating by m + n: R_m R_n = R_(m+n)",
       SubjectKind::rope, composition},
      {"relative_position",
       "<R_m q, R_n k> = <q, R_(n-m) k> = <R_(m+c) q, R_(n+c) k>, with GQA heads, a shift of its "
       "own per axis (seed 004)",
       SubjectKind::rope, relative_position},
  };
  return kAll;
}

}  // namespace ropecheck
