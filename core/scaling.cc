// Validation and text forms of RopeScaling (scaling.h).
#include "core/scaling.h"

#include <fmt/format.h>

#include <cmath>

#include "core/errors.h"

namespace ropecheck {

namespace {

constexpr std::string_view kNames[] = {"none", "linear", "ntk", "dynamic_ntk",
                                       "yarn", "llama3", "longrope"};

void require_original_max(const RopeScaling& s) {
  if (s.original_max_position < 1) {
    throw InvalidInput(fmt::format("{} scaling needs original_max_position >= 1, got {}",
                                   to_string(s.kind), s.original_max_position));
  }
}

void require_factor_array(const std::vector<double>& factors, std::string_view name,
                          int rotary_dim) {
  if (factors.size() != static_cast<std::size_t>(rotary_dim / 2)) {
    throw InvalidInput(fmt::format("longrope {} must have rotary_dim/2 = {} entries, got {}", name,
                                   rotary_dim / 2, factors.size()));
  }
  for (std::size_t i = 0; i < factors.size(); ++i) {
    if (!std::isfinite(factors[i]) || factors[i] <= 0) {
      throw InvalidInput(fmt::format("longrope {}[{}] must be finite and > 0, got {}", name, i,
                                     factors[i]));
    }
  }
}

// DeepSeek's mscale keys: HF reads them for yarn alone. Zero is allowed (HF then takes its default
// path); a negative one could make the attention factor zero, negative or infinite.
void require_mscale(const RopeScaling& s, const std::optional<double>& value, std::string_view name) {
  if (!value) return;
  if (s.kind != ScalingKind::yarn) {
    throw InvalidInput(fmt::format("{} is a yarn parameter (DeepSeek's rope_scaling), got it with {} scaling",
                                   name, to_string(s.kind)));
  }
  if (!std::isfinite(*value) || *value < 0) {
    throw InvalidInput(fmt::format("yarn {} must be finite and >= 0, got {}", name, *value));
  }
}

}  // namespace

bool uses_mscale_ratio(const RopeScaling& s) {
  return s.kind == ScalingKind::yarn && s.mscale.value_or(0.0) != 0.0 &&
         s.mscale_all_dim.value_or(0.0) != 0.0;
}

std::string_view to_string(ScalingKind kind) { return kNames[static_cast<int>(kind)]; }

ScalingKind parse_scaling_kind(std::string_view text) {
  for (const ScalingKind kind : kAllScalingKinds) {
    if (to_string(kind) == text) return kind;
  }
  throw InvalidInput(fmt::format(
      "unknown scaling '{}' (none, linear, ntk, dynamic_ntk, yarn, llama3, longrope)", text));
}

void validate(const RopeScaling& s, int rotary_dim) {
  if (s.attention_factor && (!std::isfinite(*s.attention_factor) || *s.attention_factor <= 0)) {
    throw InvalidInput(
        fmt::format("attention_factor must be finite and > 0, got {}", *s.attention_factor));
  }
  require_mscale(s, s.mscale, "mscale");
  require_mscale(s, s.mscale_all_dim, "mscale_all_dim");
  if (s.kind == ScalingKind::none) return;
  // Factors below 1 would shrink the context, which no method is defined for (HF warns too).
  if (!std::isfinite(s.factor) || s.factor < 1.0) {
    throw InvalidInput(fmt::format("{} scaling factor must be finite and >= 1, got {}",
                                   to_string(s.kind), s.factor));
  }
  if (s.sequence_length < 0) {
    throw InvalidInput(fmt::format("sequence_length must be >= 0, got {}", s.sequence_length));
  }
  switch (s.kind) {
    case ScalingKind::none:
    case ScalingKind::linear:
    case ScalingKind::ntk:
      return;
    case ScalingKind::dynamic_ntk:
      require_original_max(s);
      return;
    case ScalingKind::yarn:
      require_original_max(s);
      if (!std::isfinite(s.beta_fast) || !std::isfinite(s.beta_slow) || s.beta_slow <= 0 ||
          s.beta_fast <= s.beta_slow) {
        throw InvalidInput(fmt::format("yarn needs beta_fast > beta_slow > 0, got {} and {}",
                                       s.beta_fast, s.beta_slow));
      }
      return;
    case ScalingKind::llama3:
      require_original_max(s);
      if (!std::isfinite(s.low_freq_factor) || !std::isfinite(s.high_freq_factor) ||
          s.low_freq_factor <= 0 || s.high_freq_factor <= s.low_freq_factor) {
        throw InvalidInput(fmt::format(
            "llama3 needs high_freq_factor > low_freq_factor > 0, got {} and {}",
            s.high_freq_factor, s.low_freq_factor));
      }
      return;
    case ScalingKind::longrope:
      require_original_max(s);
      require_factor_array(s.short_factor, "short_factor", rotary_dim);
      require_factor_array(s.long_factor, "long_factor", rotary_dim);
      return;
  }
}

}  // namespace ropecheck
