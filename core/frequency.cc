// The shared frequency table and attention factor (frequency.h), and HF's fp32 formation of it.
#include "core/frequency.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace ropecheck {

namespace {

std::vector<double> unscaled(double base, int rotary_dim) {
  std::vector<double> theta(static_cast<std::size_t>(rotary_dim / 2));
  for (std::size_t i = 0; i < theta.size(); ++i) {
    // pow of an exact exponent: within 1 ulp in glibc, far below anything fp32 can see.
    theta[i] = std::pow(base, -2.0 * static_cast<double>(i) / rotary_dim);
  }
  return theta;
}

// YaRN's ramp over pair index: 0 below low, 1 above high (HF's linear_ramp_factor; a range of
// zero width is widened by 0.001 as HF and llama.cpp do).
double yarn_ramp(const CorrectionRange& range, std::size_t i) {
  const double width = range.high == range.low ? 0.001 : range.high - range.low;
  return std::clamp((static_cast<double>(i) - range.low) / width, 0.0, 1.0);
}

// Vision RoPE's table (position_axes.h): each section restarts at theta_0 = 1, the j-th pair of
// a section at base^(-2j / (d/2)); vision takes no scaling (spec.h refuses one).
std::vector<double> vision_table(const RopeSpec& spec) {
  const auto index = pair_frequency_index(spec.axes, spec.rotary_dim);
  const double pairs = spec.rotary_dim / 2;
  std::vector<double> theta(index.size());
  for (std::size_t i = 0; i < theta.size(); ++i) {
    theta[i] = std::pow(spec.base, -2.0 * index[i] / pairs);
  }
  return theta;
}

}  // namespace

double ntk_base(const RopeSpec& spec) {
  const RopeScaling& s = spec.scaling;
  const int d = spec.rotary_dim;
  // d = 2: the only pair has exponent 0, theta_0 = 1 whatever the base (and d - 2 = 0).
  if (d == 2) return spec.base;
  if (s.kind == ScalingKind::ntk) return spec.base * std::pow(s.factor, d / (d - 2.0));
  if (s.kind == ScalingKind::dynamic_ntk && s.sequence_length > s.original_max_position) {
    const double grown = s.factor * static_cast<double>(s.sequence_length) /
                             static_cast<double>(s.original_max_position) -
                         (s.factor - 1.0);
    return spec.base * std::pow(grown, d / (d - 2.0));
  }
  return spec.base;
}

CorrectionRange yarn_correction_range(const RopeSpec& spec) {
  const RopeScaling& s = spec.scaling;
  const double d = spec.rotary_dim;
  // The pair index whose wavelength fits `rotations` times into original_max_position.
  const auto dim_for = [&](double rotations) {
    return d * std::log(static_cast<double>(s.original_max_position) /
                        (rotations * 2.0 * std::numbers::pi)) /
           (2.0 * std::log(spec.base));
  };
  double low = dim_for(s.beta_fast), high = dim_for(s.beta_slow);
  if (s.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  return {std::max(low, 0.0), std::min(high, d - 1.0)};
}

std::vector<double> inverse_frequencies(const RopeSpec& spec) {
  validate(spec);
  if (spec.axes.mode == AxisMode::vision) return vision_table(spec);
  const RopeScaling& s = spec.scaling;
  if (s.kind == ScalingKind::ntk || s.kind == ScalingKind::dynamic_ntk) {
    return unscaled(ntk_base(spec), spec.rotary_dim);
  }
  std::vector<double> theta = unscaled(spec.base, spec.rotary_dim);
  switch (s.kind) {
    case ScalingKind::none:
    case ScalingKind::ntk:
    case ScalingKind::dynamic_ntk:
      break;
    case ScalingKind::linear:
      for (double& t : theta) t /= s.factor;
      break;
    case ScalingKind::yarn: {
      const auto range = yarn_correction_range(spec);
      for (std::size_t i = 0; i < theta.size(); ++i) {
        // Pairs below the range keep their frequency (extrapolation), above it are interpolated.
        const double interpolated = yarn_ramp(range, i);
        theta[i] = theta[i] / s.factor * interpolated + theta[i] * (1.0 - interpolated);
      }
      break;
    }
    case ScalingKind::llama3: {
      const double old_context = static_cast<double>(s.original_max_position);
      const double low_freq_wavelen = old_context / s.low_freq_factor;
      const double high_freq_wavelen = old_context / s.high_freq_factor;
      for (double& t : theta) {
        const double wavelen = 2.0 * std::numbers::pi / t;
        if (wavelen < high_freq_wavelen) continue;
        if (wavelen > low_freq_wavelen) {
          t /= s.factor;
          continue;
        }
        const double smooth = (old_context / wavelen - s.low_freq_factor) /
                              (s.high_freq_factor - s.low_freq_factor);
        t = (1.0 - smooth) * t / s.factor + smooth * t;
      }
      break;
    }
    case ScalingKind::longrope: {
      const auto& ext =
          s.sequence_length > s.original_max_position ? s.long_factor : s.short_factor;
      for (std::size_t i = 0; i < theta.size(); ++i) theta[i] /= ext[i];
      break;
    }
  }
  return theta;
}

double yarn_get_mscale(double factor, double mscale) {
  return factor <= 1.0 ? 1.0 : 0.1 * mscale * std::log(factor) + 1.0;
}

double attention_factor(const RopeSpec& spec) {
  validate(spec);
  const RopeScaling& s = spec.scaling;
  if (s.attention_factor) return *s.attention_factor;
  if (uses_mscale_ratio(s)) {
    return yarn_get_mscale(s.factor, *s.mscale) / yarn_get_mscale(s.factor, *s.mscale_all_dim);
  }
  if (s.kind == ScalingKind::yarn) return yarn_get_mscale(s.factor, 1.0);
  if (s.kind == ScalingKind::longrope) {
    return s.factor <= 1.0
               ? 1.0
               : std::sqrt(1.0 + std::log(s.factor) /
                                     std::log(static_cast<double>(s.original_max_position)));
  }
  return 1.0;
}

std::vector<float> inverse_frequencies_hf_fp32(const RopeSpec& spec) {
  validate(spec);
  const RopeScaling& s = spec.scaling;
  const int d = spec.rotary_dim;
  const std::size_t pairs = static_cast<std::size_t>(d / 2);
  // base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim): the base is a Python
  // float the fp32 tensor op takes as float.
  const auto pos_freqs = [&](double base) {
    std::vector<float> p(pairs);
    for (std::size_t i = 0; i < pairs; ++i) {
      p[i] = std::pow(static_cast<float>(base), static_cast<float>(2 * i) / static_cast<float>(d));
    }
    return p;
  };
  std::vector<float> inv(pairs);
  if (spec.axes.mode == AxisMode::vision) {
    // VisionRotaryEmbedding(dim = rotary_dim/2): 1.0 / (theta ** (torch.arange(0, dim, 2,
    // dtype=torch.float) / dim)), indexed by row and column: each section from its j = 0.
    const auto index = pair_frequency_index(spec.axes, d);
    const auto dim = static_cast<float>(d / 2);
    for (std::size_t i = 0; i < pairs; ++i) {
      inv[i] = 1.0f / std::pow(static_cast<float>(spec.base), static_cast<float>(2 * index[i]) / dim);
    }
    return inv;
  }
  const auto base_form = [&](double base) {
    const auto p = pos_freqs(base);
    for (std::size_t i = 0; i < pairs; ++i) inv[i] = 1.0f / p[i];  // 1.0 / (base ** ...)
  };
  switch (s.kind) {
    case ScalingKind::none:
      base_form(spec.base);
      break;
    case ScalingKind::ntk:
    case ScalingKind::dynamic_ntk:
      base_form(ntk_base(spec));  // the new base is a Python float (double) in HF
      break;
    case ScalingKind::linear:
      base_form(spec.base);
      for (float& f : inv) f /= static_cast<float>(s.factor);  // inv_freq /= factor
      break;
    case ScalingKind::yarn: {
      const auto p = pos_freqs(spec.base);
      const auto range = yarn_correction_range(spec);
      // linear_ramp_factor(min, max, dim): min and max are Python numbers, max - min in double.
      const double high = range.high == range.low ? range.high + 0.001 : range.high;
      const float low = static_cast<float>(range.low);
      const float width = static_cast<float>(high - range.low);
      const float factor = static_cast<float>(s.factor);
      for (std::size_t i = 0; i < pairs; ++i) {
        const float extrapolation = 1.0f / p[i];
        const float interpolation = 1.0f / (factor * p[i]);
        const float ramp = std::clamp((static_cast<float>(i) - low) / width, 0.0f, 1.0f);
        const float extrapolation_factor = 1.0f - ramp;
        inv[i] = interpolation * (1.0f - extrapolation_factor) +
                 extrapolation * extrapolation_factor;
      }
      break;
    }
    case ScalingKind::llama3: {
      base_form(spec.base);
      const double old_context = static_cast<double>(s.original_max_position);
      const float low_freq_wavelen = static_cast<float>(old_context / s.low_freq_factor);
      const float high_freq_wavelen = static_cast<float>(old_context / s.high_freq_factor);
      const float factor = static_cast<float>(s.factor);
      for (float& f : inv) {
        const float wavelen = 2.0f * std::numbers::pi_v<float> / f;
        const float llama = wavelen > low_freq_wavelen ? f / factor : f;
        const float smooth = (static_cast<float>(old_context) / wavelen -
                              static_cast<float>(s.low_freq_factor)) /
                             static_cast<float>(s.high_freq_factor - s.low_freq_factor);
        const float smoothed = (1.0f - smooth) * llama / factor + smooth * llama;
        const bool medium = !(wavelen < high_freq_wavelen) && !(wavelen > low_freq_wavelen);
        f = medium ? smoothed : llama;
      }
      break;
    }
    case ScalingKind::longrope: {
      const auto p = pos_freqs(spec.base);
      const auto& ext =
          s.sequence_length > s.original_max_position ? s.long_factor : s.short_factor;
      // 1.0 / (ext_factors * base**inv_freq_shape), ext_factors a float32 tensor.
      for (std::size_t i = 0; i < pairs; ++i) inv[i] = 1.0f / (static_cast<float>(ext[i]) * p[i]);
      break;
    }
  }
  return inv;
}

}  // namespace ropecheck
