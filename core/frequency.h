// The one shared definition of RoPE's inverse frequencies and of the attention factor, in double:
// theta_i = base^(-2i / rotary_dim), then scaled as spec.scaling says (scaling.h). Every
// implementation takes its frequencies from here (so that a frequency-scaling method is defined
// once); the oracle recomputes them independently in long double and a property checks this
// table against it.
#pragma once

#include <vector>

#include "core/spec.h"

namespace ropecheck {

// rotary_dim/2 entries. Unscaled: theta_0 = 1 falling geometrically to
// base^(-(rotary_dim-2)/rotary_dim); every scaling method keeps them in (0, 1]. Vision axes
// (position_axes.h): each section's own geometric run from 1.
std::vector<double> inverse_frequencies(const RopeSpec& spec);

// What cos and sin are multiplied by (YaRN's mscale, LongRoPE's scaling): 1 for the other kinds.
// Every pair's norm is scaled by exactly this.
double attention_factor(const RopeSpec& spec);

// YaRN's get_mscale(s, m) = 0.1 m ln(s) + 1 for s > 1, else 1 (HF's _compute_yarn_parameters);
// the attention factor is get_mscale(factor, 1), or DeepSeek's ratio (scaling.h).
double yarn_get_mscale(double factor, double mscale);

// The same table as HF transformers forms it, op for op in fp32 (ROPE_INIT_FUNCTIONS: scalars
// such as the correction dims and the NTK base in double, every tensor op in fp32), for the
// implementations that mirror a framework: the tolerance model's fp32 angle term covers it.
std::vector<float> inverse_frequencies_hf_fp32(const RopeSpec& spec);

// --- pieces of the definition the properties check one by one -----------------------------
// YaRN's correction range (low, high) in pair indices, as HF's find_correction_range.
struct CorrectionRange {
  double low;
  double high;
};
CorrectionRange yarn_correction_range(const RopeSpec& spec);

// The base a (dynamic) NTK spec rotates with: base * factor^(d/(d-2)), the spec's base when the
// kind is not NTK or a dynamic spec's sequence is not longer than original_max_position.
double ntk_base(const RopeSpec& spec);

}  // namespace ropecheck
