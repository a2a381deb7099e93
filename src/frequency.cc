// theta_i = base^(-2i / rotary_dim), the one shared frequency table.
#include "ropecheck/frequency.h"

#include <cmath>

namespace ropecheck {

std::vector<double> inverse_frequencies(const RopeSpec& spec) {
  validate(spec);
  const int pairs = spec.rotary_dim / 2;
  std::vector<double> theta(static_cast<std::size_t>(pairs));
  for (int i = 0; i < pairs; ++i) {
    // pow of an exact exponent: within 1 ulp in glibc, far below anything fp32 can see.
    theta[static_cast<std::size_t>(i)] =
        std::pow(spec.base, -2.0 * i / static_cast<double>(spec.rotary_dim));
  }
  return theta;
}

}  // namespace ropecheck
