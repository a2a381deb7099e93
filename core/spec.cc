// Validation and text forms of RopeSpec.
#include "core/spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "core/errors.h"
#include "core/storage.h"

namespace ropecheck {

void validate(const RopeSpec& spec) {
  if (spec.head_dim <= 0 || spec.head_dim % 2 != 0 || spec.head_dim > kMaxHeadDim) {
    throw InvalidInput(fmt::format("head_dim must be even and in [2, {}], got {}", kMaxHeadDim,
                                   spec.head_dim));
  }
  if (spec.rotary_dim <= 0 || spec.rotary_dim % 2 != 0) {
    throw InvalidInput(fmt::format("rotary_dim must be even and positive, got {}", spec.rotary_dim));
  }
  if (spec.rotary_dim > spec.head_dim) {
    throw InvalidInput(fmt::format("rotary_dim ({}) must not exceed head_dim ({})",
                                   spec.rotary_dim, spec.head_dim));
  }
  // base == 1 makes every theta_i = 1 (seed 004's periodic counter-example), not a RoPE a model
  // uses; base < 1 inverts the frequency order. Both are almost certainly a unit mistake.
  if (!std::isfinite(spec.base) || spec.base <= 1.0) {
    throw InvalidInput(fmt::format("base (theta) must be finite and > 1, got {}", spec.base));
  }
  validate(spec.scaling, spec.rotary_dim);
  validate(spec.axes, spec.rotary_dim);
  if (spec.axes.mode == AxisMode::vision && spec.scaling.kind != ScalingKind::none) {
    throw InvalidInput(fmt::format("vision RoPE takes no frequency scaling (no vision tower scales "
                                   "its frequencies), got {}", describe(spec.scaling)));
  }
}

std::string_view to_string(StorageType storage) {
  switch (storage) {
    case StorageType::bf16: return "bf16";
    case StorageType::fp16: return "fp16";
    case StorageType::fp32: break;
  }
  return "fp32";
}

std::string_view to_string(Layout layout) {
  return layout == Layout::interleaved ? "interleaved" : "half_split";
}

std::string_view to_string(AnglePrecision precision) {
  switch (precision) {
    case AnglePrecision::fp32: return "fp32";
    case AnglePrecision::fp64: return "fp64";
    case AnglePrecision::fp32_recurrence: return "fp32_recurrence";
  }
  return "?";
}

std::string_view to_string(Pass pass) {
  return pass == Pass::forward ? "forward" : "backward";
}

Pass parse_pass(std::string_view text) {
  if (text == "forward") return Pass::forward;
  if (text == "backward") return Pass::backward;
  throw InvalidInput(fmt::format("unknown pass '{}' (forward, backward)", text));
}

Layout parse_layout(std::string_view text) {
  if (text == "interleaved") return Layout::interleaved;
  if (text == "half_split") return Layout::half_split;
  throw InvalidInput(fmt::format("unknown layout '{}' (interleaved, half_split)", text));
}

AnglePrecision parse_angle_precision(std::string_view text) {
  if (text == "fp32") return AnglePrecision::fp32;
  if (text == "fp64") return AnglePrecision::fp64;
  if (text == "fp32_recurrence") return AnglePrecision::fp32_recurrence;
  throw InvalidInput(fmt::format("unknown angle precision '{}' (fp32, fp64, fp32_recurrence)", text));
}

std::string describe(const RopeScaling& s) {
  std::string text = fmt::format("scaling={}", to_string(s.kind));
  switch (s.kind) {
    case ScalingKind::none:
      break;
    case ScalingKind::linear:
    case ScalingKind::ntk:
      text += fmt::format(" factor={}", s.factor);
      break;
    case ScalingKind::dynamic_ntk:
      text += fmt::format(" factor={} original_max={} sequence_length={}", s.factor,
                          s.original_max_position, s.sequence_length);
      break;
    case ScalingKind::yarn:
      text += fmt::format(" factor={} original_max={} beta_fast={} beta_slow={}{}", s.factor,
                          s.original_max_position, s.beta_fast, s.beta_slow,
                          s.truncate ? "" : " truncate=false");
      break;
    case ScalingKind::llama3:
      text += fmt::format(" factor={} original_max={} low_freq_factor={} high_freq_factor={}",
                          s.factor, s.original_max_position, s.low_freq_factor,
                          s.high_freq_factor);
      break;
    case ScalingKind::longrope:
      text += fmt::format(" factor={} original_max={} sequence_length={} short_factor=[{}] "
                          "long_factor=[{}]",
                          s.factor, s.original_max_position, s.sequence_length,
                          fmt::join(s.short_factor, ","), fmt::join(s.long_factor, ","));
      break;
  }
  if (s.mscale) text += fmt::format(" mscale={}", *s.mscale);
  if (s.mscale_all_dim) text += fmt::format(" mscale_all_dim={}", *s.mscale_all_dim);
  if (s.attention_factor) text += fmt::format(" attention_factor={}", *s.attention_factor);
  return text;
}

std::string describe(const RopeSpec& spec) {
  std::string text = fmt::format("head_dim={} rotary_dim={} base={} layout={} angles={}",
                                 spec.head_dim, spec.rotary_dim, spec.base,
                                 to_string(spec.layout), to_string(spec.angle_precision));
  if (spec.scaling.kind != ScalingKind::none || spec.scaling.attention_factor) {
    text += " " + describe(spec.scaling);
  }
  if (spec.axes.mode != AxisMode::none) text += " " + describe(spec.axes);
  if (spec.pass == Pass::backward) text += " pass=backward";
  return text;
}

}  // namespace ropecheck
