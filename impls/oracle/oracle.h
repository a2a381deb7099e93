// The float64 oracle: the truth every tolerance is measured against.
//
// It recomputes theta_i (and the attention factor) itself in long double (independently of frequency.h, which a property
// checks against it), forms every angle m * theta_i in long double and rotates in long double,
// whatever the spec's angle_precision (that field says how an implementation *under test* forms
// its angles; the truth is always the exact rotation).
#pragma once

#include <span>
#include <vector>

#include "core/spec.h"
#include "core/tensor.h"

namespace ropecheck {

// The spec's inverse frequencies, scaling included (scaling.h), and its attention factor, each by
// formulas written apart from frequency.cc's (log domain, frequencies instead of wavelengths).
std::vector<long double> oracle_inverse_frequencies(const RopeSpec& spec);
long double oracle_attention_factor(const RopeSpec& spec);

// x is a [tokens][heads][head_dim] fp32 tensor (read only); returns the rotated tensor in double,
// same shape: R x, or for a backward spec the gradient R^T x, the 2x2 blocks transposed. Validates like RopeImpl::apply (throws InvalidInput).
std::vector<double> oracle_rope(const RopeSpec& spec, std::span<const float> x,
                                std::int64_t tokens, std::int64_t heads, PositionIds positions);
// The same of double input (a normalized q or k: QK-norm's truth, oracle_rope_form.h).
std::vector<double> oracle_rope(const RopeSpec& spec, std::span<const double> x, std::int64_t tokens,
                                std::int64_t heads, PositionIds positions);

}  // namespace ropecheck
