// manifest.json's fixed parts: generator, conventions, tolerances. The numbers come from
// tolerance.h's functions, so the manifest cannot drift from the bounds ropecheck itself checks;
// the derivation text restates that header's comment for readers without the source.
#include "vectors/manifest.h"

#include "core/build_info.h"
#include "core/tolerance.h"

namespace ropecheck {

using Json = nlohmann::ordered_json;

Json vectors_manifest_head() {
  return {
      {"format", kVectorsFormat},
      {"generator",
       {{"name", "ropecheck"},
        {"version", build_info::kVersion},
        {"git_commit", build_info::kGitCommit},
        {"command", "ropecheck vectors --out DIR"},
        {"expected_from", "the float64 oracle (impls/oracle/oracle.h): long-double theta_i, "
                          "angles m*theta_i and rotation, rounded once to float64"}}},
      {"conventions",
       {{"files", "one directory per case; paths in this manifest are relative to it. NumPy .npy "
                  "format 1.0 (magic \\x93NUMPY, version 1 0, little-endian uint16 header length, "
                  "a Python-dict header padded with spaces to a multiple of 64 bytes ending in "
                  "'\\n', then raw little-endian C-order data)"},
        {"tensors", "q and k are [tokens][heads][head_dim] (q_heads and kv_heads may differ: "
                    "GQA); positions are int64, one per token"},
        {"bf16", "bf16 arrays are stored as '<u2' bit patterns: the top 16 bits of an IEEE "
                 "binary32; widen with float32(uint32(bits) << 16)"},
        {"fp16", "fp16 arrays are NumPy's native float16, descr '<f2' (IEEE binary16, little-endian): "
                 "np.load reads them as numbers, no widening by hand. Subnormals (multiples of 2^-24 "
                 "under 2^-14) are values like any other: a port must not flush them to zero, in "
                 "its inputs or its outputs"},
        {"rope", "theta_i = base^(-2i/rotary_dim), i in [0, rotary_dim/2); interleaved: pair i = "
                 "features (2i, 2i+1); half_split: pair i = (i, i + rotary_dim/2); y_a = x_a cos(m "
                 "theta_i) - x_b sin(m theta_i), y_b = x_a sin(m theta_i) + x_b cos(m theta_i); "
                 "features past rotary_dim pass through unchanged"},
        {"sinusoidal", "PE(pos, 2i) = sin(pos * w_i), PE(pos, 2i+1) = cos(pos * w_i), w_i = "
                       "base^(-2i/d_model); pe is [positions][d_model]"},
        {"expected", "*_expected.npy: float64, the exact result on the stored inputs (bf16 and fp16 "
                     "cases: on the bf16 or fp16 values); *_expected_<dtype>.npy: the same rounded "
                     "once (to nearest even, straight from float64) to the case's dtype, for "
                     "convenience"},
        {"eps32", kEps32}}},
  };
}

Json rope_tolerance_json(StorageType dtype) {
  const double fp64_total = rotation_bound_units({AnglePrecision::fp64, dtype, 1.0, 0.0}, 0, 0.0);
  // unit_pair_norm's floor n_min / a with a = 1: the golden specs have no frequency scaling.
  // 2^-14 for fp16; fp32's and bf16's 2^-126 never binds on these inputs but keeps one formula.
  const double floor = storage_min_normal(dtype);
  Json derivation = Json::array({
      "Units: eps32 * |(x_a, x_b)|, eps32 = 2^-23, (x_a, x_b) the input pair the element belongs to "
      "(|(x_a, x_b)| raised to pair_norm_floor, the storage's smallest normal: see fp16 below).",
      "fp32 rotation y_a = c*x_a - s*x_b (y_b likewise), u = eps32/2: rounding c and s (or sinf/cosf, "
      "< 1 ulp) costs (|x_a|+|x_b|) u, the two products and the sum (|x_a|+|x_b|) u + |p| u; with "
      "|x_a|+|x_b| <= sqrt(2)|p| that is 1.91 units -> rounding = 2.",
      "Angles: an angle error of delta radians moves the pair by delta*|p|. Formed in fp64 (m*theta_i in "
      "double): delta <= |m theta_i| 2^-53, <= 0.016 units for |m theta_i| <= 2^24, inside the slack "
      "between 1.91 and 2 -> 0 units. Formed in fp32 as the frameworks do (theta_i = 1/powf(base, 2i/d) "
      "in fp32, then float(m)*theta_i): delta <= |m theta_i| (|ln theta_i| + 7) u -> "
      "(|ln theta_i|/2 + 3.5) |m theta_i| units (fp32_angles_per_radian).",
  });
  if (dtype == StorageType::bf16) {
    derivation.push_back(
        "bf16 storage: each fp32 result is rounded once more to bf16 (nearest even): |delta| <= 2^-8 "
        "|y|, |y| <= |p| (1 + 2 eps32) -> 2^15 (1 + 2^-22) units (storage). The inputs are bf16 "
        "values already, so there is no input term.");
  }
  if (dtype == StorageType::fp16) {
    derivation.push_back(
        "fp16 storage: each fp32 result is rounded once more to fp16 (nearest even, subnormals "
        "kept): for |y| >= 2^-14 (fp16's smallest normal) |delta| <= 2^-11 |y| <= 2^-11 |p| (1 + 2 "
        "eps32) -> 2^12 (1 + 2^-22) units (storage). The inputs are fp16 values already, so there "
        "is no input term.");
    derivation.push_back(
        "Under 2^-14 fp16 rounding is absolute: half the subnormal spacing 2^-24, |delta| <= 2^-25 "
        "= 2^-11 * 2^-14, however small y is. So errors are measured in units of eps32 * "
        "max(|p|, 2^-14) (pair_norm_floor = 2^-14): with |p| alone the bound would shrink to "
        "nothing on subnormal pairs while the rounding stays 2^-25. Every other term only grows "
        "with the floor. A zero pair must rotate to exact zeros.");
  }
  return {
      {"units", "eps32 * max(|(x_a, x_b)|, pair_norm_floor)"},
      {"error", "err = |y - expected| / (2^-23 * max(hypot(x_a, x_b), pair_norm_floor)), per rotated "
                "element, with expected from *_expected.npy (float64) and (x_a, x_b) the element's "
                "input pair; on these vectors the floor binds only for fp16 pairs under 2^-14"},
      {"pair_norm_floor", floor},
      {"rotation_bound_units",
       {{"rounding", kRoundingUnits},
        {"storage", storage_rounding_units(dtype)},
        {"fp64_angles", fp64_total},
        {"fp32_angles_per_radian", {{"per_abs_ln_theta", 0.5}, {"constant", kFp32AngleUnits}}}}},
      {"formula", "bound = rounding + storage + [angles formed in fp32] * (per_abs_ln_theta * |ln theta_i| + constant) * "
                  "|m * theta_i|, theta_i from theta.npy; features past rotary_dim: bit for bit"},
      {"derivation", derivation},
      {"source", "core/tolerance.h (rotation_bound_units, unit_pair_norm)"},
  };
}

Json sinusoidal_tolerance_json() {
  return {
      {"units", "eps32 (absolute: every PE value lies in [-1, 1])"},
      {"error", "err = |pe - expected| / 2^-23, expected from pe_expected.npy (float64)"},
      {"bound_units",
       {{"fp64_angles", kSinusoidalFp64Units},
        {"fp32_div_term_rounding", kSinusoidalFp32RoundingUnits}}},
      {"formula", "angles pos * w_i formed in double, rounded once to fp32: fp64_angles; PyTorch's "
                  "fp32 div_term form: fp32_div_term_rounding + |pos| w_i (a_i + 1.5), a_i = "
                  "2i ln(base)/d_model, w_i = exp(-a_i)"},
      {"derivation",
       Json::array({
           "fp64: half an ulp of a value in [-1, 1] is <= eps32/4; the double sin/cos add < 2^-52 "
           "absolute, 2^-29 units: 0.25 + 2^-29.",
           "fp32 div_term = exp(arange(0, d, 2) * -(ln(base)/d)): a_i = fl(2i * fl(-ln(base)/d)) two "
           "roundings (2u|a_i|), expf adds 2u|a_i| from its argument + 1 ulp (2u), the product pos * "
           "w_i + u: |delta angle| <= |pos w_i| (|a_i| + 1.5) eps32 radians; sinf/cosf add <= 1 ulp (0.5).",
       })},
      {"source", "core/tolerance.h (sinusoidal_bound_units)"},
  };
}

}  // namespace ropecheck
