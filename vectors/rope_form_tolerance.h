// What QK-norm adds to a call form case's bound (manifest "tolerance.qk_norm"), from
// core/tolerance.h's qk_norm_relative_error: the golden vectors' per-element bounds and
// `ropecheck check --kind rope_form` both compute them here, so the bound files cannot drift from
// the judge. Without a norm every term is 0 and a case's bound is a RoPE case's.
//   ropecheck vectors --out /tmp/golden && python3 -m json.tool /tmp/golden/manifest.json
#pragma once

#include <nlohmann/json.hpp>

#include "core/rope_form.h"
#include "core/storage.h"

namespace ropecheck {

struct FormNormTolerance {
  double relative_error = 0.0;   // delta_norm: of a normalized feature x_hat_f; 0 without a norm
  double unit_roundoff = 0.0;    // u_s of the storage: 0 fp32, 2^-8 bf16, 2^-11 fp16
  double smallest_normal = 0.0;  // n_s of the storage

  // An element of a rotated pair, absolute: unit * (a delta + eps32 units (1 + delta)), with
  // `units` the RoPE bound of its pair (rotation_bound_units, attention factor a included) and
  // `unit` the normalized pair's norm raised to the floor (tolerance.h's unit_pair_norm).
  double rotated(double units, double attention_factor, double unit) const;
  // A normalized feature past rotary_dim, absolute: delta |x_hat| + u_s max(|x_hat| (1 + delta), n_s).
  double tail(double normalized) const;
};

// The tolerance a call normalizing with `norm` (nullptr: none) on `head_dim` features in
// `storage` is held to.
FormNormTolerance form_norm_tolerance(const QkNorm* norm, int head_dim, StorageType storage);

// {relative_error, unit_roundoff, smallest_normal, formula, derivation, source}.
nlohmann::ordered_json form_norm_tolerance_json(const FormNormTolerance& tolerance, const QkNorm* norm, int head_dim);
// Its inverse; throws InvalidInput for a field missing, negative, not finite or >= 1.
FormNormTolerance form_norm_tolerance_from_json(const nlohmann::ordered_json& json);

}  // namespace ropecheck
