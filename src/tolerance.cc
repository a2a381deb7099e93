// The tolerance model (derivation in tolerance.h).
#include "ropecheck/tolerance.h"

#include <cmath>

namespace ropecheck {

double angle_units_per_radian(AnglePrecision precision) {
  return precision == AnglePrecision::fp32 ? 1.0 + kEps32 : 0.0;
}

double storage_rounding_units(StorageType storage) {
  // u_bf16 / eps32 = 2^-8 / 2^-23, times |y| / |p| <= 1 + 2 eps32.
  return storage == StorageType::bf16 ? 0x1p15 * (1 + 0x1p-22) : 0.0;
}

double rotation_bound_units(const ErrorModel& model, std::int64_t position, double theta) {
  const double angle = std::abs(static_cast<double>(position) * theta);
  return kRoundingUnits + storage_rounding_units(model.storage) +
         angle_units_per_radian(model.angles) * angle;
}

double norm_bound_units(StorageType storage) {
  return 1.4142135623730951 * (kRoundingUnits + storage_rounding_units(storage));
}

double pair_error_bound_units(const ErrorModel& model, std::int64_t position, double theta) {
  const double angle = std::abs(static_cast<double>(position) * theta);
  return norm_bound_units(model.storage) + angle_units_per_radian(model.angles) * angle;
}

double sinusoidal_bound_units(AnglePrecision precision, std::int64_t pos, int i, int d_model,
                              double base) {
  if (precision == AnglePrecision::fp64) return kSinusoidalFp64Units;
  const double exponent = 2.0 * i * std::log(base) / d_model;  // |a_i|
  const double angle = std::abs(static_cast<double>(pos)) * std::exp(-exponent);
  return kSinusoidalFp32RoundingUnits + angle * (exponent + 1.5);
}

}  // namespace ropecheck
