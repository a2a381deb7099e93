// The tolerance model (derivation in tolerance.h).
#include "ropecheck/tolerance.h"

#include <cmath>

namespace ropecheck {

double angle_units_per_radian(AnglePrecision precision) {
  return precision == AnglePrecision::fp32 ? 1.0 + kEps32 : 0.0;
}

double rotation_bound_units(AnglePrecision precision, std::int64_t position, double theta) {
  const double angle = std::abs(static_cast<double>(position) * theta);
  return kRoundingUnits + angle_units_per_radian(precision) * angle;
}

double pair_error_bound_units(AnglePrecision precision, std::int64_t position, double theta) {
  const double angle = std::abs(static_cast<double>(position) * theta);
  return kNormBoundUnits + angle_units_per_radian(precision) * angle;
}

double sinusoidal_bound_units(AnglePrecision precision, std::int64_t pos, int i, int d_model,
                              double base) {
  if (precision == AnglePrecision::fp64) return kSinusoidalFp64Units;
  const double exponent = 2.0 * i * std::log(base) / d_model;  // |a_i|
  const double angle = std::abs(static_cast<double>(pos)) * std::exp(-exponent);
  return kSinusoidalFp32RoundingUnits + angle * (exponent + 1.5);
}

}  // namespace ropecheck
