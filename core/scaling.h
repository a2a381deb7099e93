// Frequency scaling: how real checkpoints stretch RoPE past the context they were trained on.
// A RopeScaling is part of the RopeSpec; frequency.h turns it into the one shared table of
// inverse frequencies (and the attention factor that scales cos and sin), oracle.h recomputes
// both independently. The semantics are HF transformers' ROPE_INIT_FUNCTIONS (llama.cpp's YaRN
// is the same maths; see README "Conventions of other frameworks"). With d = rotary_dim,
// t_i = 2i/d and theta_i = base^-t_i the unscaled frequency:
//   none          theta_i
//   linear        theta_i / factor                                     (position interpolation)
//   ntk           base' = base * factor^(d/(d-2)), theta_i = base'^-t_i   (NTK-aware, static)
//   dynamic_ntk   as ntk with factor' = factor * L'/L - (factor - 1), L' = sequence_length, only
//                 when L' > L = original_max_position (HF "dynamic")
//   yarn          blend of theta_i/factor and theta_i by a linear ramp over pair index between the
//                 correction dims floor(c(beta_fast)) and ceil(c(beta_slow)),
//                 c(r) = d ln(L / (2 pi r)) / (2 ln base); attention factor get_mscale(factor, 1),
//                 or with DeepSeek's mscale and mscale_all_dim (both set and non-zero, as HF tests
//                 them) get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim), where
//                 get_mscale(s, m) = 0.1 m ln(s) + 1 for s > 1, else 1
//   llama3        theta_i for wavelengths < L/high_freq_factor, theta_i/factor above
//                 L/low_freq_factor, smooth interpolation between
//   longrope      theta_i / ext_i, ext = long_factor when sequence_length > L, else short_factor;
//                 attention factor sqrt(1 + ln(factor) / ln(L))
// Every method but yarn and longrope has attention factor 1; attention_factor overrides it.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace ropecheck {

enum class ScalingKind { none, linear, ntk, dynamic_ntk, yarn, llama3, longrope };

inline constexpr ScalingKind kAllScalingKinds[] = {
    ScalingKind::none,   ScalingKind::linear, ScalingKind::ntk,     ScalingKind::dynamic_ntk,
    ScalingKind::yarn,   ScalingKind::llama3, ScalingKind::longrope};

struct RopeScaling {
  ScalingKind kind = ScalingKind::none;
  double factor = 1.0;                    // every kind but none (longrope: for the attention factor)
  std::int64_t original_max_position = 0;  // L: dynamic_ntk, yarn, llama3, longrope
  std::int64_t sequence_length = 0;        // L': dynamic_ntk, longrope (HF: max position id + 1)
  double beta_fast = 32.0;                 // yarn: rotations at which the ramp starts
  double beta_slow = 1.0;                  // yarn: rotations at which it ends
  bool truncate = true;                    // yarn: floor/ceil the correction dims (HF default)
  double low_freq_factor = 1.0;            // llama3
  double high_freq_factor = 4.0;           // llama3
  std::vector<double> short_factor;        // longrope: rotary_dim/2 entries each
  std::vector<double> long_factor;
  std::optional<double> attention_factor;  // overrides the kind's default (yarn, longrope: mscale)
  // yarn, DeepSeek-V2/V3's rope_scaling keys: absent (or zero) is HF's default attention factor.
  std::optional<double> mscale;
  std::optional<double> mscale_all_dim;

  bool operator==(const RopeScaling&) const = default;
};

// Whether yarn's attention factor is DeepSeek's ratio: mscale and mscale_all_dim both set and
// non-zero (HF's `if mscale and mscale_all_dim`); one alone, or a zero, leaves the default.
bool uses_mscale_ratio(const RopeScaling& scaling);

std::string_view to_string(ScalingKind kind);
ScalingKind parse_scaling_kind(std::string_view text);  // throws InvalidInput

// Throws InvalidInput naming the bad parameter: a factor below 1 or not finite, a missing or
// non-positive original_max_position where the kind needs it, beta_fast <= beta_slow, a
// high_freq_factor not above low_freq_factor, LongRoPE arrays of the wrong length or with a
// non-positive entry, a non-positive attention factor, an mscale or mscale_all_dim that is
// negative or not finite, or given with a kind other than yarn.
void validate(const RopeScaling& scaling, int rotary_dim);

}  // namespace ropecheck
