// The tolerance model (derivation in tolerance.h).
#include "core/tolerance.h"

#include <algorithm>
#include <cmath>

#include "core/frequency.h"

namespace ropecheck {

ErrorModel error_model(const RopeSpec& spec, StorageType storage) {
  ErrorModel model{spec.angle_precision, storage, attention_factor(spec), 0.0};
  if (spec.angle_precision != AnglePrecision::fp64) model.blend_units = blend_units(spec);
  if (spec.angle_precision == AnglePrecision::fp32_recurrence) {
    model.recurrence_log_ratio = 2.0 * std::log(ntk_base(spec)) / spec.rotary_dim;
  }
  return model;
}

double angle_units_per_radian(const ErrorModel& model, double theta, int pair) {
  switch (model.angles) {
    case AnglePrecision::fp64:
      return 0.0;
    case AnglePrecision::fp32:
      return std::abs(std::log(theta)) / 2 + kFp32AngleUnits;
    case AnglePrecision::fp32_recurrence: {
      const double k = pair * (model.recurrence_log_ratio + kRecurrencePerPairUlps) +
                       kRecurrenceConstantUlps;
      return k / 2 / (1 - k * kUnitRoundoff32);
    }
  }
  return 0.0;
}

double blend_units(const RopeSpec& spec) {
  const RopeScaling& s = spec.scaling;
  if (s.kind == ScalingKind::yarn) {
    // The ramp weight and its complement, each within 3u absolute; the extra blend roundings.
    return 1.5 * (s.factor - 1.0) + 0.5;
  }
  if (s.kind == ScalingKind::llama3) {
    // smooth = (L / wavelen - lf) / (hf - lf): wavelen and L/wavelen within 3u of cycles <= hf,
    // so smooth within (3 hf / (hf - lf) + 2) u absolute.
    return (1.5 * s.high_freq_factor / (s.high_freq_factor - s.low_freq_factor) + 1.0) *
               (s.factor - 1.0) +
           0.5;
  }
  return 0.0;
}

double storage_rounding_units(StorageType storage) {
  // u_s / eps32 (bf16: 2^-8 / 2^-23, fp16: 2^-11 / 2^-23), times |y| / |p| <= 1 + 2 eps32.
  switch (storage) {
    case StorageType::bf16: return 0x1p15 * (1 + 0x1p-22);
    case StorageType::fp16: return 0x1p12 * (1 + 0x1p-22);
    case StorageType::fp32: break;
  }
  return 0.0;
}

double storage_min_normal(StorageType storage) {
  return storage == StorageType::fp16 ? double{kFp16MinNormal} : 0x1p-126;
}

double storage_unit_roundoff(StorageType storage) {
  switch (storage) {
    case StorageType::bf16: return 0x1p-8;
    case StorageType::fp16: return 0x1p-11;
    case StorageType::fp32: break;
  }
  return 0.0;
}

double storage_rounding_error(StorageType storage, double x) {
  return storage_unit_roundoff(storage) * std::max(std::abs(x), storage_min_normal(storage));
}

double fp8_unit_roundoff(Fp8Format format) { return std::ldexp(1.0, -(fp8_traits(format).mantissa_bits + 1)); }

double fp8_rounding_error(Fp8Format format, double y) {
  const double smallest_normal = std::ldexp(1.0, 1 - fp8_traits(format).bias);
  return fp8_unit_roundoff(format) * std::max(std::abs(y), smallest_normal);
}

double unit_pair_norm(StorageType storage, double attention_factor, double pair_norm) {
  if (pair_norm == 0) return 0;
  return std::max(pair_norm, storage_min_normal(storage) / attention_factor);
}

double rounding_units(const ErrorModel& model) {
  const bool scaled_in_fp32 =
      model.angles != AnglePrecision::fp64 && model.attention_factor != 1.0;
  return kRoundingUnits + (scaled_in_fp32 ? kFp32AttentionScalingUnits : 0.0);
}

namespace {

double angle_units(const ErrorModel& model, std::int64_t position, double theta, int pair) {
  if (model.angles == AnglePrecision::fp64) return 0.0;
  const double angle = std::abs(static_cast<double>(position) * theta);
  return (angle_units_per_radian(model, theta, pair) + model.blend_units) * angle;
}

}  // namespace

double rotation_bound_units(const ErrorModel& model, std::int64_t position, double theta, int pair) {
  return model.attention_factor * (rounding_units(model) + storage_rounding_units(model.storage) +
                                   angle_units(model, position, theta, pair));
}

double norm_bound_units(const ErrorModel& model) {
  return model.attention_factor * 1.4142135623730951 *
         (rounding_units(model) + storage_rounding_units(model.storage));
}

double pair_error_bound_units(const ErrorModel& model, std::int64_t position, double theta,
                              int pair) {
  return norm_bound_units(model) + model.attention_factor * angle_units(model, position, theta, pair);
}

double qk_norm_relative_error(int head_dim, NormPrecision precision, StorageType storage) {
  const double norm = gamma32(head_dim / 2.0 + 7.0);
  if (precision == NormPrecision::fp32) return norm;
  const double u_s = storage_unit_roundoff(storage);
  return (1 + norm) * (1 + u_s) * (1 + u_s) - 1;
}

double sinusoidal_bound_units(AnglePrecision precision, std::int64_t pos, int i, int d_model,
                              double base) {
  if (precision == AnglePrecision::fp64) return kSinusoidalFp64Units;
  const double exponent = 2.0 * i * std::log(base) / d_model;  // |a_i|
  const double angle = std::abs(static_cast<double>(pos)) * std::exp(-exponent);
  return kSinusoidalFp32RoundingUnits + angle * (exponent + 1.5);
}

double CacheTolerance::clamp(double y) const { return std::clamp(y, -saturates_at, saturates_at); }

double CacheTolerance::pre_narrowing(double rotation, double sigma, double y) const {
  return sigma * rotation * (1 + scale_rounding) + scale_rounding * std::abs(y);
}

double CacheTolerance::bound(double y, double pre) const {
  return pre + unit_roundoff * (std::max(std::abs(clamp(y)), smallest_normal) + pre);
}

CacheTolerance cache_tolerance(CacheStorage storage) {
  CacheTolerance t;
  switch (storage) {
    case CacheStorage::fp32: t.smallest_normal = 0x1p-126; break;
    case CacheStorage::bf16: t = {storage_unit_roundoff(StorageType::bf16), storage_min_normal(StorageType::bf16)}; break;
    case CacheStorage::fp16: t = {storage_unit_roundoff(StorageType::fp16), storage_min_normal(StorageType::fp16)}; break;
    case CacheStorage::fp8_e4m3:
    case CacheStorage::fp8_e5m2: {
      const Fp8Format format = fp8_format(storage);
      t.unit_roundoff = fp8_unit_roundoff(format);
      t.smallest_normal = std::ldexp(1.0, 1 - fp8_traits(format).bias);
      t.scale_rounding = kCacheScaleRounding;
      t.saturates_at = fp8_traits(format).max;
      break;
    }
  }
  return t;
}

}  // namespace ropecheck
