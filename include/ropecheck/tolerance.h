// The tolerance model: every bound in ropecheck is derived here, from the error model below,
// never picked to make a test pass. Results report the observed error as a fraction of its bound.
//
// Units. An output element y of rotary pair p = (x_a, x_b) is compared with the float64 oracle:
//   err = |y - y_oracle| / (eps32 * |(x_a, x_b)|),   eps32 = 2^-23.
//
// Model for an fp32 rotation y_a = c*x_a - s*x_b (y_b likewise), u = eps32/2:
//   - c, s rounded to fp32 (or sinf/cosf, < 1 ulp on [-1, 1], so <= u):  (|x_a|+|x_b|) * u
//   - the two products and the sum, each rounded once:                  (|x_a|+|x_b|) * u + |p| * u
//   with |x_a|+|x_b| <= sqrt(2)|p|:  err <= (2*sqrt(2)/2 + 1/2) = 1.91  -> kRoundingUnits = 2.
// Angle formation. An angle error of delta radians moves the pair by delta*|p|: delta units/eps32.
//   - fp64 angles: delta <= |m theta| * 2^-53, at most 0.016 units for |m theta| <= 2^24: inside
//     the slack between 1.91 and 2 below, so 0 units.
//   - fp32 angles: float(theta) and the product float(m)*float(theta) are each rounded once
//     (float(m) is exact for |m| <= 2^24): delta <= 2u|m theta| = eps32*|m theta| -> |m theta| units.
// Storage. An implementation that stores bf16 rounds each fp32 result y once more (round to
//   nearest even): |delta| <= u_bf16 |y| with u_bf16 = 2^-8, and |y| <= |p| (1 + 2 eps32) by the
//   fp32 model above, so 2^15 (1 + 2^-22) more units. Its inputs are bf16 values already (the
//   properties round them before the oracle sees them), so there is no input term.
// So the per-element bound is kRoundingUnits + storage units + angle units per radian * |m theta_i|.
#pragma once

#include <cstdint>
#include <limits>

#include "ropecheck/spec.h"
#include "ropecheck/storage.h"

namespace ropecheck {

// What an implementation's error depends on: how it forms angles, what it stores results in.
struct ErrorModel {
  AnglePrecision angles = AnglePrecision::fp64;
  StorageType storage = StorageType::fp32;
};

inline constexpr double kEps32 = std::numeric_limits<float>::epsilon();  // 2^-23

// Rounding of c, s, two products and a sum (derivation above): 1.91 rounded up.
inline constexpr double kRoundingUnits = 2.0;

// Extra units per radian of |m theta| from forming the angle in the given precision.
// fp32: 1 + eps32 (the first-order eps32*|m theta| plus the second-order u^2 term, as 1 + u/2 <= 1 + eps32).
double angle_units_per_radian(AnglePrecision precision);

// Units added by rounding each result to the storage type (0 for fp32; derivation above).
double storage_rounding_units(StorageType storage);

// Per-element bound, in units of eps32 * |pair|, for a pair rotated by angle m*theta.
double rotation_bound_units(const ErrorModel& model, std::int64_t position, double theta);

// Bound on the norm of a pair's whole error vector, same units: the two elements' rounding
// errors add in quadrature (sqrt(2) * kRoundingUnits) while an angle error moves the pair as a
// whole by |delta| * |p|, not sqrt(2) times that. This is what a later rotation can move into
// one element (inverse, composition).
double pair_error_bound_units(const ErrorModel& model, std::int64_t position, double theta);

// A rotation changes a pair's norm only through rounding (an angle error is still a rotation):
//   | |y_p| - |x_p| | <= |error vector| <= sqrt(2) * (kRoundingUnits + storage units),
// whatever the angle. kNormBoundUnits is the fp32 value.
double norm_bound_units(StorageType storage);
inline constexpr double kNormBoundUnits = 1.4142135623730951 * kRoundingUnits;

// --- the sinusoidal table (seed 003) ----------------------------------------------------------
// Units: eps32, absolute (every value lies in [-1, 1], the pair (sin, cos) has norm 1).
//   fp64 (the formula in double, rounded once): half an ulp of a value in [-1, 1] is <= eps32/4;
//     the double sin/cos add < 2^-52 absolute, 2^-29 units: 0.25 + 2^-29.
//   fp32 (PyTorch's div_term = exp(arange(0, d, 2) * -(ln(base)/d)) in fp32, then sinf/cosf of
//     the fp32 product pos * div_term):
//       a_i = fl(2i * fl(-ln(base)/d)): two roundings, |delta a_i| <= 2u|a_i|
//       w_i = expf(a_i): relative error 2u|a_i| from the argument, + 1 ulp (2u) from expf
//       angle = fl(pos * w_i): + u relative
//     so |delta angle| <= |pos w_i| (|a_i| + 1.5) eps32 radians, and sinf/cosf add <= 1 ulp (0.5).
inline constexpr double kSinusoidalFp64Units = 0.25 + 0x1p-29;
inline constexpr double kSinusoidalFp32RoundingUnits = 0.5;

// Bound, in eps32, on one element of pair i of PE(pos) for d_model d and the given base.
double sinusoidal_bound_units(AnglePrecision precision, std::int64_t pos, int i, int d_model,
                              double base);

}  // namespace ropecheck
