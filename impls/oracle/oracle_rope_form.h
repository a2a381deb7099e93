// The float64 truth of RoPE in an engine's call form, QK-norm included (core/rope_form.h, issue
// 52): each head normalized in long double over its head_dim features (x / sqrt(mean(x^2) + eps)
// times w or 1 + w as declared), then rotated by oracle_rope() (the same truth as every other
// form). The angles are the exact ones whatever the source: a cos/sin cache's rounding is the
// implementation's error, as an fp32 angle is.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/rope_form.h"
#include "core/spec.h"
#include "core/tensor.h"

namespace ropecheck {

struct NormRopeTruth {
  std::vector<double> normalized;  // before the rotation; x itself without a norm
  std::vector<double> rotated;     // the call's result
};

// x: [tokens][heads][spec.head_dim], the view's rows gathered (storage values widened). norm:
// nullptr for a call without QK-norm (then weight is not read). Throws InvalidInput as
// oracle_rope does, and for a weight that is not head_dim long.
NormRopeTruth oracle_norm_rope(const RopeSpec& spec, const QkNorm* norm, std::span<const float> weight,
                               std::span<const float> x, std::int64_t tokens, std::int64_t heads,
                               PositionIds positions);

// One head's normalized features, in long double: what oracle_norm_rope rotates.
std::vector<double> oracle_rms_norm(const QkNorm& norm, std::span<const float> weight, std::span<const float> head);

}  // namespace ropecheck
