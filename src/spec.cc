// Validation and text forms of RopeSpec.
#include "ropecheck/spec.h"

#include <fmt/format.h>

#include <cmath>

#include "ropecheck/errors.h"
#include "ropecheck/storage.h"

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
}

std::string_view to_string(StorageType storage) {
  return storage == StorageType::bf16 ? "bf16" : "fp32";
}

std::string_view to_string(Layout layout) {
  return layout == Layout::interleaved ? "interleaved" : "half_split";
}

std::string_view to_string(AnglePrecision precision) {
  return precision == AnglePrecision::fp32 ? "fp32" : "fp64";
}

Layout parse_layout(std::string_view text) {
  if (text == "interleaved") return Layout::interleaved;
  if (text == "half_split") return Layout::half_split;
  throw InvalidInput(fmt::format("unknown layout '{}' (interleaved, half_split)", text));
}

AnglePrecision parse_angle_precision(std::string_view text) {
  if (text == "fp32") return AnglePrecision::fp32;
  if (text == "fp64") return AnglePrecision::fp64;
  throw InvalidInput(fmt::format("unknown angle precision '{}' (fp32, fp64)", text));
}

std::string describe(const RopeSpec& spec) {
  return fmt::format("head_dim={} rotary_dim={} base={} layout={} angles={}", spec.head_dim,
                     spec.rotary_dim, spec.base, to_string(spec.layout),
                     to_string(spec.angle_precision));
}

}  // namespace ropecheck
