// FormNormTolerance (rope_form_tolerance.h): the numbers are core/tolerance.h's, the lines say
// where each comes from for a porter without the source.
#include "vectors/rope_form_tolerance.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/errors.h"
#include "core/tolerance.h"

namespace ropecheck {

using Json = nlohmann::ordered_json;

double FormNormTolerance::rotated(double units, double attention_factor, double unit) const {
  return unit * (attention_factor * relative_error + kEps32 * units * (1 + relative_error));
}

double FormNormTolerance::tail(double normalized) const {
  const double x = std::abs(normalized);
  return relative_error * x + unit_roundoff * std::max(x * (1 + relative_error), smallest_normal);
}

FormNormTolerance form_norm_tolerance(const QkNorm* norm, int head_dim, StorageType storage) {
  FormNormTolerance t;
  if (norm == nullptr) return t;
  t.relative_error = qk_norm_relative_error(head_dim, norm->precision, storage);
  t.unit_roundoff = storage_unit_roundoff(storage);
  t.smallest_normal = storage_min_normal(storage);
  return t;
}

Json form_norm_tolerance_json(const FormNormTolerance& t, const QkNorm* norm, int head_dim) {
  Json derivation = Json::array();
  if (norm == nullptr) {
    derivation.push_back("No QK-norm: every term is 0, the rotated features are held to tolerance.rotation as a "
                         "RoPE case's, the features past rotary_dim pass through bit for bit.");
  } else {
    derivation.push_back(fmt::format(
        "x_hat_f = x_f r w'_f, r = 1 / sqrt(s / n + eps), s = sum of x_j^2 over the head's n = {} features, in "
        "fp32 (u = 2^-24): s within gamma_n whatever the order of the sum; s / n and + eps 2u each, so gamma_(n+4), "
        "halved by the root; the root and the reciprocal 2u; x_f r, 1 + w (one_plus) and the product with w' u "
        "each: relative_error = gamma_(n+4) / 2 + 5u <= gamma_(n/2 + 7).",
        head_dim));
    if (norm->precision == NormPrecision::storage) {
      derivation.push_back(
          "precision storage (an unfused chain in the model's dtype): x_f r rounded to the storage, then the "
          "product with w' again: relative_error = (1 + gamma_(n/2 + 7)) (1 + u_s)^2 - 1.");
    }
    derivation.push_back(
        "Rotated: the rotation is orthogonal times a, so the normalized pair's error moves the result by a "
        "relative_error |p_hat|; its own rounding (tolerance.rotation's bound in units) is of a pair up to "
        "(1 + relative_error) |p_hat| long.");
    derivation.push_back(
        "Past rotary_dim: normalized, not rotated: relative_error |x_hat_f|, plus the storage's one rounding of "
        "the result, u_s max(|x_hat_f| (1 + relative_error), n_s).");
  }
  return {{"relative_error", t.relative_error},
          {"unit_roundoff", t.unit_roundoff},
          {"smallest_normal", t.smallest_normal},
          {"formula",
           "rotated element: bound = unit * (attention_factor * relative_error + 2^-23 * units * (1 + "
           "relative_error)), units = tolerance.rotation's bound for the element's pair and position, unit = "
           "max(hypot(x_hat_a, x_hat_b), pair_norm_floor) of the normalized pair (<q|k>_normalized.npy; the input "
           "pair without a norm); element past rotary_dim with a norm: relative_error |x_hat_f| + unit_roundoff * "
           "max(|x_hat_f| (1 + relative_error), smallest_normal); without: bit for bit"},
          {"derivation", derivation},
          {"source", "core/tolerance.h (qk_norm_relative_error, rotation_bound_units, unit_pair_norm)"}};
}

FormNormTolerance form_norm_tolerance_from_json(const Json& json) {
  FormNormTolerance t;
  const auto field = [&](const char* key) {
    const double x = json.at(key).get<double>();
    if (!std::isfinite(x) || x < 0 || x >= 1) {
      throw InvalidInput(fmt::format("tolerance.qk_norm.{} must be finite, >= 0 and < 1, got {}", key, x));
    }
    return x;
  };
  t.relative_error = field("relative_error");
  t.unit_roundoff = field("unit_roundoff");
  t.smallest_normal = field("smallest_normal");
  return t;
}

}  // namespace ropecheck
