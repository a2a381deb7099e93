// manifest.json's fixed parts: generator, conventions, specs, tolerances. The numbers come from
// tolerance.h's and frequency.h's functions, so the manifest cannot drift from the bounds and
// tables ropecheck itself checks; the derivation text restates tolerance.h's comment for readers
// without the source.
#include "vectors/manifest.h"

#include <fmt/format.h>

#include "core/scaling_parameters.h"
#include "core/build_info.h"
#include "core/frequency.h"
#include "core/tolerance.h"

namespace ropecheck {

using Json = nlohmann::ordered_json;

namespace {

Json optional_number(const std::optional<double>& x) { return x ? Json(*x) : Json(nullptr); }

// Derivation lines for what scaling adds to a case's bound; none for an unscaled case.
void add_scaling_derivation(Json& derivation, const ErrorModel& fp32_model) {
  if (fp32_model.blend_units != 0) {
    derivation.push_back(
        "Blended tables (YaRN's ramp, Llama 3's smooth band) formed in fp32: each fp32 weight in [0, "
        "1] is off by a few u, which moves theta_i by up to (factor - 1)/factor of itself per "
        "rounding: fp32_angles_per_radian.blend = 1.5 (factor - 1) + 0.5 (YaRN) or (1.5 hf/(hf - lf) + "
        "1)(factor - 1) + 0.5 (Llama 3) more units per radian of |m theta_i|.");
  }
  if (fp32_model.attention_factor != 1.0) {
    derivation.push_back(
        "Attention factor a (YaRN, LongRoPE): y = a R x, so every term scales with a: the bound is "
        "multiplied by attention_factor. A port forming angles in fp32 that multiplies fp32 cos/sin by "
        "float(a) rounds c and s twice more, 2u (|x_a| + |x_b|) <= sqrt(2) units: "
        "fp32_attention_scaling = 1.5. The floor is the storage's smallest normal over a (its "
        "absolute rounding u_s n_min against a u_s |p|).");
  }
}

}  // namespace

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
                    "GQA); positions are int64, one per token ([tokens]), or [tokens][axes] on a "
                    "multi-axis case (spec.axes)"},
        {"bf16", "bf16 arrays are stored as '<u2' bit patterns: the top 16 bits of an IEEE "
                 "binary32; widen with float32(uint32(bits) << 16)"},
        {"fp16", "fp16 arrays are NumPy's native float16, descr '<f2' (IEEE binary16, little-endian): "
                 "np.load reads them as numbers, no widening by hand. Subnormals (multiples of 2^-24 "
                 "under 2^-14) are values like any other: a port must not flush them to zero, in "
                 "its inputs or its outputs"},
        {"rope", "theta_i = base^(-2i/rotary_dim), i in [0, rotary_dim/2), then scaled as "
                 "spec.scaling says (theta.npy holds the result); interleaved: pair i = features (2i, "
                 "2i+1); half_split: pair i = (i, i + rotary_dim/2); y_a = a (x_a cos(m theta_i) - x_b "
                 "sin(m theta_i)), y_b = a (x_a sin(m theta_i) + x_b cos(m theta_i)), a the attention "
                 "factor (tolerance.rotation_bound_units.attention_factor; 1 unless scaled); features "
                 "past rotary_dim pass through unchanged"},
        {"sinusoidal", "PE(pos, 2i) = sin(pos * w_i), PE(pos, 2i+1) = cos(pos * w_i), w_i = "
                       "base^(-2i/d_model); pe is [positions][d_model]"},
        {"expected", "*_expected.npy: float64, the exact result on the stored inputs (bf16 and fp16 "
                     "cases: on the bf16 or fp16 values); *_expected_<dtype>.npy: the same rounded "
                     "once (to nearest even, straight from float64) to the case's dtype, for "
                     "convenience"},
        {"scaling", "spec.scaling is the case's frequency scaling in ropecheck's terms (core/scaling.h): "
                    "kind none, linear, ntk, dynamic_ntk, yarn, llama3 or longrope and the parameters that "
                    "kind reads; yarn's mscale and mscale_all_dim (DeepSeek's) only where set, and when "
                    "both are non-zero a = get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim), "
                    "get_mscale(s, m) = 0.1 m ln(s) + 1. theta.npy holds the scaled theta_i, and the "
                    "expected outputs carry the attention factor a on cos and sin: y = a R(m theta_i) x. "
                    "A scaled case also carries "
                    "scaling_effective (what the parameters lead to), hf_transformers (the HF config "
                    "fields that reproduce it) and conventions (where HF transformers versions or other "
                    "frameworks read the parameters differently, and which reading the case follows)"},
        {"axes", "spec.axes is the case's position axes (core/position_axes.h): mode none (one "
                 "position per token) or a multi-axis mode with its sections, the rotary pairs of each "
                 "axis (adding up to rotary_dim/2; HF's mrope_section before its * 2). Pair i rotates by "
                 "the position of its axis: mrope (Qwen2-VL; axes t, h, w) pairs [0, s0) axis t, the "
                 "next s1 axis h, the rest axis w; imrope (Qwen3-VL) axis h when i mod 3 = 1 and i < 3 "
                 "s1, w when i mod 3 = 2 and i < 3 s2, else t; vision (Qwen2-VL's vision tower; axes "
                 "row, column) pairs [0, s0) the row, the rest the column, and each section restarts "
                 "the frequencies: its j-th pair has theta = base^(-2j/(rotary_dim/2)) (theta.npy holds "
                 "each pair's). positions.npy is then int64 [tokens][axes]: row t is token t's position "
                 "on each axis"},
        {"outputs", "`ropecheck check --vectors DIR --outputs OUT` reads a port's results from "
                    "OUT/<case>/q_out.npy and OUT/<case>/k_out.npy (sinusoidal cases: pe_out.npy), each "
                    "with the descr and shape of the case's own q.npy and k.npy (pe: '<f4', "
                    "[positions][d_model]); every case lists its paths under \"outputs\""},
        {"pass", "spec.pass: forward (q.npy and k.npy are x, the outputs R(m) x, as every case before "
                 "format /4) or backward (RoPE's gradient: q.npy and k.npy are dy, the gradient of a "
                 "loss with respect to the rotated q and k, and the outputs dx = a R(m)^T dy, the same "
                 "rotation with the sine's sign flipped, (x, y) -> (x cos + y sin, -x sin + y cos), the "
                 "attention factor a multiplying it too, the tail's gradient passed through); the "
                 "tolerance is the forward's"},
        {"rope_cache",
         "kind rope_cache: the fused call of inference engines (vLLM's reshape_and_cache_flash and "
         "concat_and_cache_mla, FlashInfer's append_paged_kv_cache): q rotated in place; k rotated and, "
         "with v, scaled and narrowed into a paged cache at each token's slot (slots.npy; block = slot / "
         "block_size, offset = slot % block_size, -1 padding). \"cache\" states the layout (nhd "
         "[blocks][block_size][kv_heads][head_dim], hnd [blocks][kv_heads][block_size][head_dim], mla "
         "[blocks][block_size][latent_dim + head_dim]: the latent kv_c from v.npy, then the rotated k_pe from "
         "k.npy, one cache), the storage ('<f4' fp32, '<u2' bf16 bits, '<f2' fp16, '|u1' FP8 codes: e4m3fn or "
         "e5m2, saturating), the FP8 scales (one per tensor or per kv head; multiply: stored = x * scale, "
         "divide: stored = x / scale) and the padding rule (skip_token: a -1 token's q is left as it came; "
         "rotate_q_only: it is rotated, only its write skipped). A port starts from <k|v>_cache_initial.npy "
         "and writes q_out.npy, k_cache_out.npy and v_cache_out.npy (mla: no v_cache): the q tolerance is "
         "a RoPE case's in fp32, every written cache element is held to tolerance.cache, every other "
         "element must keep its initial bytes"},
        {"rope_form",
         "kind rope_form: RoPE in an engine's own call form, QK-norm fused before it (Qwen3, Gemma 3, GLM-4.5). "
         "One buffer (buffer.npy, 1-D, the storage's '<f4', '<u2' bf16 bits or '<f2') holds q, k and whatever "
         "lies around them (v, MLA's nope parts and latent, padding); \"call\" states q's and k's views into it "
         "(heads, offset, token_stride, head_stride: the element of (token t, head h, feature f) is offset + t "
         "token_stride + h head_stride + f, f < spec.head_dim; k null: a call without k), the angle source "
         "(spec: cos and sin of m theta_i formed by the port; cos_sin_cache: read from cos_sin_cache.npy, fp32 "
         "[rows][rotary_dim], row m = cos(m theta_i) a for i < rotary_dim/2 then sin(m theta_i) a, built from "
         "the spec with its scaling), the QK-norm (eps, weight plain w or one_plus 1 + w, precision fp32 or "
         "storage; q_weight.npy and k_weight.npy, fp32 [head_dim]) and the named regions. A port applies the "
         "call to a copy of buffer.npy and writes the whole buffer as buffer_out.npy: each view row's element "
         "within its bound (<q|k>_bound.npy, or tolerance's formula from <q|k>_expected.npy and "
         "<q|k>_normalized.npy), every other element bit for bit as in buffer.npy"},
        {"format", "ropecheck.vectors/6 adds to /5 the rope_form cases and the convention rope_form; "
                   "/5 added to /4 the rope_cache cases and the convention rope_cache; "
                   "/4 added to /3 spec.pass per RoPE case and the backward cases; "
                   "/3 added to /2 spec.axes per RoPE case and the multi-axis "
                   "cases, whose positions.npy is [tokens][axes]; /2 added to /1 (whose fields keep "
                   "their names and meanings): spec.scaling, scaling_effective, hf_transformers, "
                   "conventions and outputs per RoPE case; the tolerance fields attention_factor, "
                   "fp32_attention_scaling and fp32_angles_per_radian.blend, which are 1, 0 and 0 on "
                   "unscaled cases, where /1's formula gives the same bound"},
        {"eps32", kEps32}}},
  };
}

Json scaling_json(const RopeScaling& s) {
  Json j = {{"kind", std::string(to_string(s.kind))}};
  if (s.kind == ScalingKind::none) {
    if (s.attention_factor) j["attention_factor"] = *s.attention_factor;
    return j;
  }
  const ScalingParameters reads = parameters_read_by(s.kind);
  j["factor"] = s.factor;
  if (reads.original_max_position) j["original_max_position"] = s.original_max_position;
  if (reads.sequence_length) j["sequence_length"] = s.sequence_length;
  if (reads.yarn_ramp) {
    j["beta_fast"] = s.beta_fast;
    j["beta_slow"] = s.beta_slow;
    j["truncate"] = s.truncate;
  }
  // Only where set, as a config has them: absent is HF's default attention factor.
  if (reads.yarn_mscale && s.mscale) j["mscale"] = *s.mscale;
  if (reads.yarn_mscale && s.mscale_all_dim) j["mscale_all_dim"] = *s.mscale_all_dim;
  if (reads.llama3_band) {
    j["low_freq_factor"] = s.low_freq_factor;
    j["high_freq_factor"] = s.high_freq_factor;
  }
  if (reads.longrope_factors) {
    j["short_factor"] = s.short_factor;
    j["long_factor"] = s.long_factor;
  }
  j["attention_factor"] = optional_number(s.attention_factor);
  return j;
}

Json axes_json(const PositionAxes& axes) {
  Json j = {{"mode", std::string(to_string(axes.mode))}};
  if (axes.mode == AxisMode::none) return j;
  const auto count = static_cast<std::size_t>(axis_count(axes));
  j["sections"] = std::vector<int>(axes.sections.begin(), axes.sections.begin() + static_cast<std::ptrdiff_t>(count));
  return j;
}

Json rope_spec_json(const RopeSpec& spec) {
  return {{"head_dim", spec.head_dim},
          {"rotary_dim", spec.rotary_dim},
          {"base", spec.base},
          {"layout", std::string(to_string(spec.layout))},
          {"angle_precision", std::string(to_string(spec.angle_precision))},
          {"scaling", scaling_json(spec.scaling)},
          {"axes", axes_json(spec.axes)},
          {"pass", std::string(to_string(spec.pass))}};
}

Json scaling_effective_json(const RopeSpec& spec) {
  const RopeScaling& s = spec.scaling;
  Json j = {{"attention_factor", attention_factor(spec)}};
  switch (s.kind) {
    case ScalingKind::ntk:
    case ScalingKind::dynamic_ntk:
      j["ntk_base"] = ntk_base(spec);
      break;
    case ScalingKind::yarn: {
      const auto range = yarn_correction_range(spec);
      j["correction_range"] = {range.low, range.high};
      break;
    }
    case ScalingKind::longrope:
      j["factors_used"] = s.sequence_length > s.original_max_position ? "long" : "short";
      break;
    default:
      break;
  }
  return j;
}

std::string port_output_path(std::string_view case_name, std::string_view tensor) {
  return fmt::format("{}/{}_out.npy", case_name, tensor);
}

Json rope_tolerance_json(const RopeSpec& spec, StorageType dtype) {
  RopeSpec fp32_spec = spec;
  fp32_spec.angle_precision = AnglePrecision::fp32;
  const ErrorModel fp32_model = error_model(fp32_spec, dtype);
  RopeSpec recurrence_spec = spec;
  recurrence_spec.angle_precision = AnglePrecision::fp32_recurrence;
  const ErrorModel recurrence_model = error_model(recurrence_spec, dtype);
  const double a = fp32_model.attention_factor;
  const double fp64_total = rotation_bound_units({AnglePrecision::fp64, dtype, a, 0.0}, 0, 0.0, 0);
  // What fp32 angles add to the rounding when a != 1 (tolerance.h's rounding_units).
  const double fp32_attention_scaling = rounding_units(fp32_model) - kRoundingUnits;
  // unit_pair_norm's floor n_min / a: 2^-14 / a for fp16; fp32's and bf16's 2^-126 / a never
  // binds on these inputs but keeps one formula.
  const double floor = unit_pair_norm(dtype, a, 0x1p-200);
  Json derivation = Json::array({
      "Units: eps32 * |(x_a, x_b)|, eps32 = 2^-23, (x_a, x_b) the input pair the element belongs to "
      "(|(x_a, x_b)| raised to pair_norm_floor, the storage's smallest normal over the attention "
      "factor: see fp16 below).",
      "fp32 rotation y_a = c*x_a - s*x_b (y_b likewise), u = eps32/2: rounding c and s (or sinf/cosf, "
      "< 1 ulp) costs (|x_a|+|x_b|) u, the two products and the sum (|x_a|+|x_b|) u + |p| u; with "
      "|x_a|+|x_b| <= sqrt(2)|p| that is 1.91 units -> rounding = 2.",
      "Angles: an angle error of delta radians moves the pair by delta*|p|. Formed in fp64 (m*theta_i in "
      "double): delta <= |m theta_i| 2^-53, <= 0.016 units for |m theta_i| <= 2^24, inside the slack "
      "between 1.91 and 2 -> 0 units. Formed in fp32 as the frameworks do (theta_i = 1/powf(base, 2i/d) "
      "in fp32, then float(m)*theta_i): delta <= |m theta_i| (|ln theta_i| + 7) u -> "
      "(|ln theta_i|/2 + 3.5) |m theta_i| units (fp32_angles_per_radian).",
      "Formed by an fp32 recurrence as ggml's rope cache does (theta_scale = powf(base', -2/d), "
      "angle_0 = float(m), angle_(i+1) = angle_i * theta_scale in fp32; base' the NTK base it "
      "rotates with): after i steps the relative error is at most k_i u / (1 - k_i u) with k_i = "
      "i (log_ratio + 3) + 4, log_ratio = 2 ln(base')/d (the exponent's rounding), 3 per step (powf's "
      "ulp, the product's rounding), 4 for float(base'), two scaling operations and a final product "
      "by m -> (k_i/2) / (1 - k_i 2^-24) |m theta_i| units for pair i "
      "(fp32_recurrence_angles_per_radian), plus the blend as for fp32 angles.",
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
  add_scaling_derivation(derivation, fp32_model);
  return {
      {"units", "eps32 * max(|(x_a, x_b)|, pair_norm_floor)"},
      {"error", "err = |y - expected| / (2^-23 * max(hypot(x_a, x_b), pair_norm_floor)), per rotated "
                "element, with expected from *_expected.npy (float64) and (x_a, x_b) the element's "
                "input pair; on these vectors the floor binds only for fp16 pairs under 2^-14 / "
                "attention_factor"},
      {"pair_norm_floor", floor},
      {"rotation_bound_units",
       {{"rounding", kRoundingUnits},
        {"storage", storage_rounding_units(dtype)},
        {"fp64_angles", fp64_total},
        {"fp32_angles_per_radian",
         {{"per_abs_ln_theta", 0.5}, {"constant", kFp32AngleUnits}, {"blend", fp32_model.blend_units}}},
        {"fp32_recurrence_angles_per_radian",
         {{"log_ratio", recurrence_model.recurrence_log_ratio},
          {"per_pair_ulps", kRecurrencePerPairUlps},
          {"constant_ulps", kRecurrenceConstantUlps},
          {"blend", recurrence_model.blend_units}}},
        {"attention_factor", a},
        {"fp32_attention_scaling", fp32_attention_scaling}}},
      {"formula", "bound = attention_factor * (rounding + storage + [angles formed in fp32] "
                  "(fp32_attention_scaling + (per_abs_ln_theta * |ln theta_i| + constant + blend) * "
                  "|m * theta_i|)), theta_i from theta.npy; fp64_angles is the total without the "
                  "bracket; [formed by an fp32 recurrence] the bracket with (k_i / 2 / (1 - k_i "
                  "2^-24) + blend) for the per-radian term, k_i = i (log_ratio + per_pair_ulps) + "
                  "constant_ulps, i the pair index; features past rotary_dim: bit for bit"},
      {"derivation", derivation},
      {"source", "core/tolerance.h (rotation_bound_units, rounding_units, blend_units, unit_pair_norm)"},
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
