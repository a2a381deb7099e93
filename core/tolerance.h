// The tolerance model: every bound in ropecheck is derived here, from the error model below,
// never picked to make a test pass. Results report the observed error as a fraction of its bound.
//
// Units. An output element y of rotary pair p = (x_a, x_b) is compared with the float64 oracle:
//   err = |y - y_oracle| / (eps32 * |(x_a, x_b)|),   eps32 = 2^-23
// (for pairs so small that storage rounding is absolute, a floor on |p|: unit_pair_norm below).
//
// Model for an fp32 rotation y_a = c*x_a - s*x_b (y_b likewise), u = eps32/2:
//   - c, s rounded to fp32 (or sinf/cosf, < 1 ulp on [-1, 1], so <= u):  (|x_a|+|x_b|) * u
//   - the two products and the sum, each rounded once:                  (|x_a|+|x_b|) * u + |p| * u
//   with |x_a|+|x_b| <= sqrt(2)|p|:  err <= (2*sqrt(2)/2 + 1/2) = 1.91  -> kRoundingUnits = 2.
// Angle formation. An angle error of delta radians moves the pair by delta*|p|: delta units/eps32.
//   - fp64 angles: delta <= |m theta| * 2^-53, at most 0.016 units for |m theta| <= 2^24: inside
//     the slack between 1.91 and 2 below, so 0 units.
//   - fp32 angles, the frameworks' way (HF transformers, Meta LLaMA, PyTorch peers): theta_i is
//     formed in fp32 as 1 / powf(float(base), float(2i/d)), possibly scaled by a couple of fp32
//     operations (linear: / factor; LongRoPE: * ext_i), then the product float(m) * theta_i in
//     fp32 (float(m) is exact for |m| <= 2^24). Relative errors, first order, u = eps32/2:
//       float(base): t_i u <= u     the exponent 2i/d rounded: ln(base) t_i u = |ln theta_i| u
//       powf: <= 1 ulp (2u)         the reciprocal: u       two scaling ops: 2u     the product: u
//     so delta <= |m theta_i| (|ln theta_i| + 7) u: (|ln theta_i|/2 + 3.5) units per radian
//     (|ln theta_i| >= t_i ln base when scaling only lowers frequencies, which every kind does).
//     A correctly rounded float(theta_i) (ropecheck's own fp32-angle references) is inside it.
//   - fp32 recurrence angles (ggml's rope cache, kernels that cache theta): theta_scale =
//     powf(float(base'), -2/d) with base' the (NTK) base it rotates with, then angle_0 = float(m)
//     and angle_{i+1} = angle_i * theta_scale in fp32, pair by pair; any other scaling applied to
//     angle_i by a couple of fp32 operations. theta_scale's relative error: the exponent -2/d
//     rounded, lambda u with lambda = |ln theta_scale| = 2 ln(base')/d; float(base'): (2/d) u;
//     powf: 2u. Each step multiplies by it and rounds once more (u), so after i steps
//       (1 + e)^i with e <= (lambda + 2/d + 3) u:  i lambda u + 3 i u + i (2/d) u (<= u)
//     plus two scaling ops (2u) and, for kernels that cache theta_i and multiply by m last, that
//     product (u):  k_i = i lambda + 3 i + 4, to first order; the i-fold product is bounded by
//     gamma: k_i u / (1 - k_i u). So (k_i / 2) / (1 - k_i u) units per radian, plus the blend of
//     YaRN and Llama 3 as for fp32 angles. It grows with i: about 1.57 i units per radian at
//     d = 128, base 1e4, against (|ln theta_i|/2 + 3.5) for fp32 angles: a recurrence kernel
//     declaring fp32 angles fails at high pair indices, by design.
//     Blended kinds (YaRN's ramp, Llama 3's smooth band) formed in fp32 add the weights' error
//     times the spread of what they blend, at most (factor - 1)/factor relative per rounding of
//     a weight in [0, 1]: yarn_llama3_blend_units below.
// Storage rounding (bf16, fp16: fp32 arithmetic, then each result rounded once to the storage):
//   one rounding to nearest of y, |y| <= a |p| (1 + 2 eps32):  |delta| <= u_s |y|, u_s = 2^-8
//   (bf16), 2^-11 (fp16): u_s/eps32 * (1 + 2 eps32) units, storage_rounding_units. The inputs
//   are storage values already, the oracle rotates those: no input term. (Against the oracle of
//   unrounded fp32 inputs the input's rounding, u_s |p|, would add the same term once more: it
//   is the conversion's error, not the rotation's, so ropecheck rounds first.)
//   Below the storage's smallest normal n_min (fp16: 2^-14) the rounding is absolute, half the
//   subnormal spacing: |delta| <= u_s n_min (2^-25). So for every y, |delta| <= u_s max(|y|,
//   n_min) <= u_s a (1 + 2 eps32) max(|p|, n_min / a). Errors are therefore measured in units
//   of eps32 * unit_pair_norm = eps32 * max(|p|, n_min / a): every other term of the bound only
//   grows with it. It is |p| except for fp16 pairs under 2^-14 / a (and subnormal fp32 pairs).
// Attention factor a (YaRN, LongRoPE): y = a R x, every term above scales with a. fp64-angle
//   implementations fold a into cos/sin before their one rounding; fp32 ones multiply the fp32
//   cos/sin by float(a) (HF: emb.cos() * attention_scaling): two more roundings of c and s,
//   2u (|x_a|+|x_b|) <= sqrt(2) units: kFp32AttentionScalingUnits.
#pragma once

#include <cstdint>
#include <limits>

#include "core/spec.h"
#include "core/fp8.h"
#include "core/kv_cache.h"
#include "core/rope_form.h"
#include "core/storage.h"

namespace ropecheck {

// What an implementation's error depends on: how it forms angles, what it stores results in,
// and the attention factor its cos/sin carry (frequency.h's attention_factor(spec)).
struct ErrorModel {
  AnglePrecision angles = AnglePrecision::fp64;
  StorageType storage = StorageType::fp32;
  double attention_factor = 1.0;
  // Extra fp32-angle units per radian for a table blended in fp32 (YaRN, Llama 3): see
  // blend_units(spec); 0 for the others and for fp64 angles.
  double blend_units = 0.0;
  // fp32_recurrence: lambda = |ln theta_scale| = 2 ln(base') / rotary_dim (derivation above).
  double recurrence_log_ratio = 0.0;
};

// The model an implementation declaring `angles` and `storage` is held to on `spec`.
ErrorModel error_model(const RopeSpec& spec, StorageType storage);

inline constexpr double kEps32 = std::numeric_limits<float>::epsilon();  // 2^-23
// fp32 unit roundoff u = eps32 / 2, and Higham's gamma_n = n u / (1 - n u): the relative error
// bound of n roundings in a chain (a dot product of length n, a sum), what the attention and
// multi-head bounds are built from.
inline constexpr double kUnitRoundoff32 = kEps32 / 2;
constexpr double gamma32(double n) { return n * kUnitRoundoff32 / (1 - n * kUnitRoundoff32); }

// Rounding of c, s, two products and a sum (derivation above): 1.91 rounded up.
inline constexpr double kRoundingUnits = 2.0;
// fp32 cos/sin times float(attention factor): sqrt(2) rounded up to 1.5.
inline constexpr double kFp32AttentionScalingUnits = 1.5;
// fp32 angles: per radian, |ln theta_i| / 2 plus this (derivation above).
inline constexpr double kFp32AngleUnits = 3.5;

// fp32 recurrence: constants of k_i = i lambda + kRecurrencePerPairUlps i + kRecurrenceConstantUlps
// (in u = eps32 / 2; derivation above).
inline constexpr double kRecurrencePerPairUlps = 3.0;
inline constexpr double kRecurrenceConstantUlps = 4.0;

// Extra units per radian of |m theta| from forming the angle as `model` says, for pair `pair`
// (its index i) whose (scaled) inverse frequency is theta; the blend of `model` not included.
double angle_units_per_radian(const ErrorModel& model, double theta, int pair);

// fp32 angle units a blended table adds (YaRN's ramp, Llama 3's smooth band): each fp32 weight
// w in [0, 1] is off by a few u, which moves theta_i by that times theta_i (1 - 1/factor), i.e.
// relative (factor - 1) * few u for a pair at theta_i / factor; 0 for the other kinds.
double blend_units(const RopeSpec& spec);

// Units added by rounding each result to the storage type (0 for fp32; derivation above).
double storage_rounding_units(StorageType storage);

// Smallest normal value of the storage type (fp16: 2^-14; fp32 and bf16: 2^-126).
double storage_min_normal(StorageType storage);

// The norm a pair's errors are measured in units of (derivation above): max(|p|, n_min / a),
// for a pair of norm |p| stored as `storage` and rotated with attention factor a. Zero stays
// zero: a zero pair must rotate to exact zeros.
double unit_pair_norm(StorageType storage, double attention_factor, double pair_norm);

// Units of c/s and product rounding: kRoundingUnits, plus kFp32AttentionScalingUnits for fp32
// angles with an attention factor other than 1.
double rounding_units(const ErrorModel& model);

// Per-element bound, in units of eps32 * |pair|, for pair `pair` (index i, inverse frequency
// theta) rotated by angle m*theta.
double rotation_bound_units(const ErrorModel& model, std::int64_t position, double theta, int pair);

// Bound on the norm of a pair's whole error vector, same units: the two elements' rounding
// errors add in quadrature (sqrt(2) * rounding units) while an angle error moves the pair as a
// whole by |delta| * |p|, not sqrt(2) times that. This is what a later rotation can move into
// one element (inverse, composition).
double pair_error_bound_units(const ErrorModel& model, std::int64_t position, double theta,
                              int pair);

// A rotation scales a pair's norm by the attention factor a, and changes it otherwise only
// through rounding (an angle error is still a rotation):
//   | |y_p| - a |x_p| | <= |error vector| <= a * sqrt(2) * (rounding units + storage units),
// whatever the angle. kNormBoundUnits is the plain fp32 value.
double norm_bound_units(const ErrorModel& model);
inline constexpr double kNormBoundUnits = 1.4142135623730951 * kRoundingUnits;

// --- attention on K and V kept in a narrower storage (llama.cpp's F16 KV cache) ----------------
// An attention that keeps K and V as fp16 (or bf16) rounds each of their elements x once, to
// nearest: |fl_s(x) - x| <= u_s |x| for normal results, and at most half the subnormal spacing,
// u_s n_min, below the smallest normal n_min (fp16: 2^-25); so <= u_s max(|x|, n_min). K and V
// kept in fp32 are not rounded: 0. The attention bound (properties/attention_properties.cc) adds
// what these move: each score by scale sum_c |q_c| |dk_c|, each output by sum_j P_j |dv_j|.
double storage_unit_roundoff(StorageType storage);  // u_s: 0 for fp32 (kept), 2^-8, 2^-11
double storage_rounding_error(StorageType storage, double x);  // the bound on |fl_s(x) - x|

// --- a KV cache kept in FP8 (core/fp8.h, core/kv_cache.h) -------------------------------------
// An FP8 cache write narrows y (the value in the stored domain, x * scale or x / scale) once, to
// nearest: with M mantissa bits, u_8 = 2^-(M+1) (e4m3 2^-4, e5m2 2^-3), and below the smallest
// normal n_8 (e4m3 2^-6, e5m2 2^-14) half the subnormal spacing, u_8 n_8. So for |y| up to the
// largest finite value, |fp8(y) - y| <= u_8 max(|y|, n_8), attained as y comes down to a power of
// two from just above its midpoint (fp8_test.cc shows the ratio reach 1). Past the largest value
// the write saturates: the stored value is the largest, exactly (a property of its own).
double fp8_unit_roundoff(Fp8Format format);                // u_8
double fp8_rounding_error(Fp8Format format, double y);     // the bound on |fp8(y) - y|, |y| <= max

// --- one element of a KV cache write (core/kv_cache.h) -----------------------------------------
// What the fused call's properties and its golden vectors hold a written cache element to. The
// call rotates k in fp32 (|k~ - k| <= rotation, the RoPE bound above; 0 for v and MLA's latent),
// scales it into the stored domain in fp32 (FP8 only: y~ = sigma k~ (1 + d), sigma the scale or
// its inverse, one rounding, or two where a kernel forms 1/scale first and multiplies: |d| <=
// (1 + u)^2 - 1), so |y~ - y| <= pre = sigma rotation (1 + r) + r |y|; then narrows once, to
// nearest: |n(y~) - y~| <= u_s max(|y~|, n_s), saturating at FP8's largest. n is 1-Lipschitz after
// the clamp, so |n(y~) - clamp(y)| <= pre + u_s (max(|clamp(y)|, n_s) + pre).
inline constexpr double kCacheScaleRounding = 0x1p-23 + 0x1p-48;  // (1 + 2^-24)^2 - 1
struct CacheTolerance {
  double unit_roundoff = 0.0;      // u_s: 0 fp32 (kept), 2^-8 bf16, 2^-11 fp16, u_8 FP8
  double smallest_normal = 0.0;    // n_s
  double scale_rounding = 0.0;     // r: kCacheScaleRounding for FP8, 0 where there is no scale
  double saturates_at = INFINITY;  // FP8's largest finite value; infinite where nothing saturates

  double clamp(double y) const;  // y clamped to +-saturates_at
  double pre_narrowing(double rotation, double sigma, double y) const;
  double bound(double y, double pre) const;  // on |stored - clamp(y)|
};
// The tolerance of a cache kept in `storage`.
CacheTolerance cache_tolerance(CacheStorage storage);

// --- QK-norm before the rotation (core/rope_form.h) -------------------------------------------
// A normalized feature x_hat_f = x_f r w'_f, r = 1 / sqrt(s / n + eps), s = sum_j x_j^2 over the
// head's n = head_dim features, computed in fp32 (u = eps32 / 2), relative errors, first order:
//   s: n products and n - 1 sums of nonnegative terms: gamma_n (Higham (3.5)), whatever the order
//     or the lanes the sum runs in
//   s / n: a division, or 1/n rounded and a product: 2u     eps rounded to fp32, the sum: 2u
//   so s / n + eps within gamma_(n+4); the root halves it: gamma_(n+4) / 2
//   the root and the reciprocal (or rsqrt refined to within 2u): 2u
//   x_f r: u    1 + w formed in fp32 (Gemma's): u    the product with w': u
// delta_norm = gamma_(n+4) / 2 + 5u <= gamma32(n/2 + 7): about n/4 + 3.5 units, 35 at n = 128.
// The rotation then moves the pair's error as a whole (it is orthogonal, times the attention
// factor a): a delta_norm |p_hat| more, in units of eps32 |p_hat|, the normalized pair's norm;
// and its own rounding (rotation_bound_units) is of a pair (1 + delta_norm) times as long.
// Declared precision `storage` (an unfused chain in the model's dtype, HF's `weight *
// x.to(dtype)`): x_f r rounded to the storage, then the product with w' too: (1 + delta_norm)
// (1 + u_s)^2 - 1. For fp32 storage both are the same.
// Features past rotary_dim are normalized, not rotated: delta_norm |x_hat_f| plus the storage's
// rounding of the result.
double qk_norm_relative_error(int head_dim, NormPrecision precision, StorageType storage);

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
