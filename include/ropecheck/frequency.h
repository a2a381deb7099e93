// The one shared definition of RoPE's inverse frequencies, theta_i = base^(-2i / rotary_dim),
// in double. Every implementation takes its frequencies from here (so that a frequency-scaling
// method is defined once); the oracle recomputes them independently in long double and a
// property checks this table against it.
#pragma once

#include <vector>

#include "ropecheck/spec.h"

namespace ropecheck {

// rotary_dim/2 entries, theta_0 = 1 falling geometrically to base^(-(rotary_dim-2)/rotary_dim).
std::vector<double> inverse_frequencies(const RopeSpec& spec);

}  // namespace ropecheck
