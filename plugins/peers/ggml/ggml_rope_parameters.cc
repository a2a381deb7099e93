// rope_parameters() (ggml_rope_parameters.h): the spec's formulas are plugin.h's; what ggml does
// with each argument is ggml_rope_cache_init and rope_yarn in ggml-cpu (theta *= theta_scale,
// theta / freq_factors[i], freq_scale times that, the YaRN ramp by pair index).
#include "ggml_rope_parameters.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstddef>
#include <limits>

#include "ggml.h"

namespace ropecheck_ggml_peer {
namespace {

constexpr double kPi = 3.14159265358979323846;

// NTK's new base (plugin.h): base * factor^(d/(d-2)); d = 2 has only theta_0 = 1, any base.
double ntk_base(const ropecheck_plugin_spec& s) {
  const int d = s.rotary_dim;
  if (d == 2) return s.base;
  double factor = s.factor;
  if (s.scaling_kind == ROPECHECK_SCALING_DYNAMIC_NTK) {
    if (s.sequence_length <= s.original_max_position) return s.base;  // not grown yet: unscaled
    factor = s.factor * static_cast<double>(s.sequence_length) / static_cast<double>(s.original_max_position) -
             (s.factor - 1.0);
  }
  return s.base * std::pow(factor, d / (d - 2.0));
}

// Llama 3's divisor of pair i's frequency: theta_i / theta'_i over the band (plugin.h).
double llama3_divisor(const ropecheck_plugin_spec& s, int i) {
  const double theta = std::pow(s.base, -2.0 * i / s.rotary_dim);
  const double wavelength = 2 * kPi / theta;
  const double L = static_cast<double>(s.original_max_position);
  if (wavelength < L / s.high_freq_factor) return 1.0;
  if (wavelength > L / s.low_freq_factor) return s.factor;
  const double a = (L / wavelength - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
  return 1.0 / ((1 - a) / s.factor + a);
}

bool fits_int(std::int64_t v) { return v > 0 && v <= std::numeric_limits<int>::max(); }

// YaRN's divisor of pair i without the floor and ceil of its correction dims (plugin.h):
// theta_i / theta'_i, theta'_i = theta_i / factor * r_i + theta_i * (1 - r_i).
double yarn_divisor(const ropecheck_plugin_spec& s, int i) {
  const double d = s.rotary_dim;
  const auto dim_for = [&](double rotations) {
    return d * std::log(static_cast<double>(s.original_max_position) / (rotations * 2 * kPi)) / (2 * std::log(s.base));
  };
  const double low = std::max(dim_for(s.beta_fast), 0.0), high = std::min(dim_for(s.beta_slow), d - 1);
  const double width = high == low ? 0.001 : high - low;
  const double r = std::clamp((i - low) / width, 0.0, 1.0);
  return 1.0 / (r / s.factor + (1.0 - r));
}

// ggml_rope_multi's mode, n_dims and sections for a multi-axis spec (ggml.h: NEOX ordering).
void multi_axis_parameters(const ropecheck_plugin_spec& s, RopeParameters& p) {
  p.multi = true;
  const int mode = axis_mode(s);
  p.mode = mode == ROPECHECK_AXES_MROPE    ? GGML_ROPE_TYPE_MROPE
           : mode == ROPECHECK_AXES_IMROPE ? GGML_ROPE_TYPE_IMROPE
                                           : GGML_ROPE_TYPE_VISION;
  // VISION's n_dims is half the rotated features: its theta_scale is base^(-2 / n_dims), the
  // section's own exponent 2j / (rotary_dim / 2), and it rotates pairs (i, i + n_dims).
  if (mode == ROPECHECK_AXES_VISION) p.n_dims = s.rotary_dim / 2;
  for (int a = 0; a < 3; ++a) p.sections[a] = s.sections[a];
}

}  // namespace

int axis_mode(const ropecheck_plugin_spec& spec) {
  return spec.struct_size >= offsetof(ropecheck_plugin_spec, sections) ? spec.axis_mode : ROPECHECK_AXES_NONE;
}

std::string rope_parameters(const ropecheck_plugin_spec& s, RopeParameters& p) {
  p = RopeParameters{};
  p.n_dims = s.rotary_dim;
  p.mode = s.layout == ROPECHECK_LAYOUT_INTERLEAVED ? GGML_ROPE_TYPE_NORMAL : GGML_ROPE_TYPE_NEOX;
  p.freq_base = static_cast<float>(s.base);
  p.attn_factor = static_cast<float>(s.attention_factor > 0 ? s.attention_factor : 1.0);
  const int half = s.rotary_dim / 2;
  // ggml-cpu asserts n_dims % 2 == 0 for VISION (and aborts the process): an odd pair count does
  // not map. Real vision towers have even ones (Qwen2-VL's head_dim 80: 40 pairs).
  if (axis_mode(s) == ROPECHECK_AXES_VISION && half % 2 != 0) {
    return "vision with an odd number of rotary pairs: ggml-cpu asserts n_dims % 2 == 0";
  }
  if (axis_mode(s) != ROPECHECK_AXES_NONE) multi_axis_parameters(s, p);
  switch (s.scaling_kind) {
    case ROPECHECK_SCALING_NONE: return "";
    case ROPECHECK_SCALING_LINEAR:
      p.freq_scale = static_cast<float>(1.0 / s.factor);
      return "";
    case ROPECHECK_SCALING_NTK:
    case ROPECHECK_SCALING_DYNAMIC_NTK:
      p.freq_base = static_cast<float>(ntk_base(s));
      return "";
    case ROPECHECK_SCALING_YARN:
      if (s.yarn_truncate == 0) {
        // ggml's YaRN always floors and ceils the correction dims; an unfloored ramp (GPT-OSS's
        // truncate: false) goes in as rope_freqs, as Llama 3's band does: each pair's divisor
        // theta_i / theta'_i, no ext_factor, the attention factor as attn_factor.
        for (int i = 0; i < half; ++i) p.freq_factors.push_back(static_cast<float>(yarn_divisor(s, i)));
        return "";
      }
      if (!fits_int(s.original_max_position)) return "yarn: original_max_position exceeds ggml's int n_ctx_orig";
      p.freq_scale = static_cast<float>(1.0 / s.factor);
      p.ext_factor = 1.0f;
      p.n_ctx_orig = static_cast<int>(s.original_max_position);
      p.beta_fast = static_cast<float>(s.beta_fast);
      p.beta_slow = static_cast<float>(s.beta_slow);
      // rope_yarn multiplies cos and sin by (1 + 0.1 ln(1/freq_scale)) itself whenever
      // ext_factor != 0: YaRN's own attention factor maps as attn_factor = 1, exactly. Another
      // (an override) is what llama.cpp passes for DeepSeek-2: attn_factor = it / (1 + 0.1 ln
      // factor), which ggml's product restores only to an ulp or so (an override of 1 gives
      // 0.99999994 at position 0: identity_at_zero's finding, docs/findings.md).
      p.attn_factor = std::abs(s.attention_factor - (1.0 + 0.1 * std::log(s.factor))) <= 1e-12 * s.attention_factor
                          ? 1.0f
                          : static_cast<float>(s.attention_factor / (1.0 + 0.1 * std::log(s.factor)));
      return "";
    case ROPECHECK_SCALING_LLAMA3:
      if (!fits_int(s.original_max_position)) return "llama3: original_max_position exceeds an int";
      for (int i = 0; i < half; ++i) p.freq_factors.push_back(static_cast<float>(llama3_divisor(s, i)));
      return "";
    case ROPECHECK_SCALING_LONGROPE: {
      const double* factors = s.sequence_length > s.original_max_position ? s.long_factor : s.short_factor;
      if (factors == nullptr) return "longrope without its factor arrays";
      for (int i = 0; i < half; ++i) p.freq_factors.push_back(static_cast<float>(factors[i]));
      return "";
    }
    default: return "a scaling kind this peer does not know";
  }
}

ropecheck_plugin_spec spec_without_pointers(const ropecheck_plugin_spec& spec) {
  ropecheck_plugin_spec copy{};
  std::memcpy(&copy, &spec, spec.struct_size < sizeof copy ? spec.struct_size : sizeof copy);
  copy.short_factor = copy.long_factor = nullptr;
  return copy;
}

std::vector<double> spec_factors(const ropecheck_plugin_spec& spec) {
  std::vector<double> f;
  const std::size_t half = static_cast<std::size_t>(spec.rotary_dim / 2);
  if (spec.short_factor != nullptr) f.insert(f.end(), spec.short_factor, spec.short_factor + half);
  if (spec.long_factor != nullptr) f.insert(f.end(), spec.long_factor, spec.long_factor + half);
  return f;
}

}  // namespace ropecheck_ggml_peer
