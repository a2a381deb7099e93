// Student's t distribution for integer degrees of freedom: the CDF in closed form (Abramowitz &
// Stegun 26.7.3/26.7.4, finite series in cos(theta)) and its quantile by bisection. The gate's
// interval needs only integer df (rounds - 1), so no incomplete beta function is needed.
//   student_t_quantile(0.975, 9) == 2.2622 (to 1e-4)
#pragma once

namespace ropecheck {

// P(T <= t) for T ~ Student t with `df` >= 1 degrees of freedom; t = +-inf gives 1 or 0.
double student_t_cdf(double t, int df);

// The t with P(T <= t) = p, for p in (0, 1) and df >= 1 (to ~1e-12 relative).
double student_t_quantile(double p, int df);

}  // namespace ropecheck
