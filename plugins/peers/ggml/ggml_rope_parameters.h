// A ropecheck spec (plugins/include/ropecheck/plugin.h) as the arguments of ggml_rope_ext, where
// it maps onto them exactly, and why not where it does not:
//   layout       interleaved -> GGML_ROPE_TYPE_NORMAL, half_split -> GGML_ROPE_TYPE_NEOX
//   rotary_dim   n_dims (ggml copies features n_dims.. head_dim unchanged)
//   base         freq_base (ggml takes a float: base rounded to fp32)
//   linear       freq_scale = 1/factor
//   ntk          freq_base = base * factor^(d/(d-2)), as a model's rope_freq_base carries it
//   dynamic_ntk  the same with factor' = factor L'/L - (factor - 1) when L' > L (ggml itself has
//                no dynamic form: the caller recomputes the base, as the spec does)
//   yarn         freq_scale = 1/factor, ext_factor = 1, n_ctx_orig = L, beta_fast, beta_slow,
//                attn_factor = 1: ggml multiplies in YaRN's own 1 + 0.1 ln(1/freq_scale) itself
//                when ext_factor != 0. Not exact: another attention factor (an override) goes in
//                as attn_factor = it / (1 + 0.1 ln factor), llama.cpp's way, an ulp off after
//                ggml's product. yarn_truncate = 0: ggml always floors and ceils the correction
//                dims (ggml_rope_yarn_corr_dims), so the unfloored ramp goes in as freq_factors
//                (each pair's theta_i / theta'_i) with the attention factor as attn_factor and
//                no ext_factor. n_ctx_orig is an int.
//   llama3       freq_factors[i] = theta_i / theta'_i (the band's smooth mix), as llama.cpp's
//   longrope     converters store rope_freqs; longrope: the long or the short factors
//   attention    attn_factor (cos and sin times it)
//   axes (ABI 3) ggml_rope_multi: mrope -> GGML_ROPE_TYPE_MROPE, imrope -> GGML_ROPE_TYPE_IMROPE
//                (n_dims = rotary_dim, sections {s_t, s_h, s_w, 0}), vision -> GGML_ROPE_TYPE_VISION
//                (n_dims = rotary_dim / 2: ggml.h's "head_size/2" of the rotated features,
//                sections {s_row, s_column, 0, 0}, the frequencies restarting per section).
//                ggml applies them in NEOX ordering only and rotates a vision head whole: the
//                plugin hands it interleaved or partial vision rows repacked (ggml_neox_rows.h),
//                as llama.cpp's converters permute the weights. Positions go in axis-major, four
//                a token ({t...}, {h...}, {w...}, {e...}), the fourth 0.
// Positions are int32 in ggml: |m| < 2^31 (ropecheck's limit, 2^24, is smaller).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ropecheck/plugin.h"

namespace ropecheck_ggml_peer {

// The scaling kinds that map (capabilities.scaling_kinds).
inline constexpr std::uint32_t kScalingKinds =
    (1u << ROPECHECK_SCALING_LINEAR) | (1u << ROPECHECK_SCALING_NTK) |
    (1u << ROPECHECK_SCALING_DYNAMIC_NTK) | (1u << ROPECHECK_SCALING_YARN) |
    (1u << ROPECHECK_SCALING_LLAMA3) | (1u << ROPECHECK_SCALING_LONGROPE);

// The position axes that map (capabilities.axis_modes).
inline constexpr std::uint32_t kAxisModes =
    (1u << ROPECHECK_AXES_MROPE) | (1u << ROPECHECK_AXES_IMROPE) | (1u << ROPECHECK_AXES_VISION);

// ggml_rope_multi's positions a token (GGML_MROPE_SECTIONS).
inline constexpr int kGgmlAxes = 4;

struct RopeParameters {
  int n_dims = 0, mode = 0, n_ctx_orig = 0;
  float freq_base = 0, freq_scale = 1, ext_factor = 0, attn_factor = 1, beta_fast = 0, beta_slow = 0;
  std::vector<float> freq_factors;  // empty: none (ggml's c argument NULL)
  bool multi = false;               // ggml_rope_multi with `sections` (n_dims and mode as above)
  int sections[kGgmlAxes] = {};
};

// The parameters of `spec`, or "" replaced by why the spec does not map (then UNSUPPORTED). A
// multi-axis spec's are those of its rows in NEOX ordering (ggml_neox_rows.h).
std::string rope_parameters(const ropecheck_plugin_spec& spec, RopeParameters& out);

// The spec without its pointers (the LongRoPE arrays), for comparing two calls' specs byte by byte,
// and those arrays' values (a graph kept for reuse compares both).
ropecheck_plugin_spec spec_without_pointers(const ropecheck_plugin_spec& spec);
std::vector<double> spec_factors(const ropecheck_plugin_spec& spec);

// The spec's axis mode (NONE where struct_size ends before it: an ABI 2 caller's spec).
int axis_mode(const ropecheck_plugin_spec& spec);

}  // namespace ropecheck_ggml_peer
