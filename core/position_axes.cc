// The section rules of multi-axis RoPE (position_axes.h).
#include "core/position_axes.h"

#include <fmt/format.h>

#include "core/errors.h"

namespace ropecheck {

int axis_count(AxisMode mode) {
  switch (mode) {
    case AxisMode::none: return 1;
    case AxisMode::mrope:
    case AxisMode::imrope: return 3;
    case AxisMode::vision: return 2;
  }
  return 1;
}

std::vector<int> pair_axes(const PositionAxes& axes, int rotary_dim) {
  const int pairs = rotary_dim / 2;
  std::vector<int> axis(static_cast<std::size_t>(pairs), 0);
  const auto& s = axes.sections;
  for (int i = 0; i < pairs; ++i) {
    int a = 0;
    switch (axes.mode) {
      case AxisMode::none: break;
      case AxisMode::mrope:
      case AxisMode::vision:  // consecutive sections
        a = i < s[0] ? 0 : i < s[0] + s[1] ? 1 : 2;
        break;
      case AxisMode::imrope:  // t h w t h w ..., an axis dropping out once its section is used
        a = i % 3 == 1 && i < 3 * s[1] ? 1 : i % 3 == 2 && i < 3 * s[2] ? 2 : 0;
        break;
    }
    axis[static_cast<std::size_t>(i)] = a;
  }
  return axis;
}

std::vector<int> pair_frequency_index(const PositionAxes& axes, int rotary_dim) {
  std::vector<int> index(static_cast<std::size_t>(rotary_dim / 2));
  for (std::size_t i = 0; i < index.size(); ++i) {
    const int in_section =
        axes.mode == AxisMode::vision && static_cast<int>(i) >= axes.sections[0]
            ? static_cast<int>(i) - axes.sections[0]
            : static_cast<int>(i);
    index[i] = in_section;
  }
  return index;
}

void validate(const PositionAxes& axes, int rotary_dim) {
  const auto& s = axes.sections;
  if (axes.mode == AxisMode::none) {
    if (s[0] != 0 || s[1] != 0 || s[2] != 0) {
      throw InvalidInput(fmt::format("sections {},{},{} given without a multi-axis mode (mrope, "
                                     "imrope, vision)", s[0], s[1], s[2]));
    }
    return;
  }
  for (const int section : s) {
    if (section < 0) {
      throw InvalidInput(fmt::format("{} sections must not be negative, got {},{},{}",
                                     to_string(axes.mode), s[0], s[1], s[2]));
    }
  }
  if (axes.mode == AxisMode::vision && s[2] != 0) {
    throw InvalidInput(fmt::format("vision RoPE has two axes (row, column): sections {},{},{} "
                                   "give a third", s[0], s[1], s[2]));
  }
  // Its frequencies are a half-width RoPE's over rotary_dim/2 features, which come in pairs: HF's
  // VisionRotaryEmbedding(rotary_dim/2) makes rotary_dim/4 of them, ggml's VISION asserts an
  // even n_dims (= rotary_dim/2).
  if (axes.mode == AxisMode::vision && rotary_dim % 4 != 0) {
    throw InvalidInput(fmt::format("vision RoPE needs rotary_dim a multiple of 4 (an even number of "
                                   "pairs), got {}", rotary_dim));
  }
  if (s[0] + s[1] + s[2] != rotary_dim / 2) {
    throw InvalidInput(fmt::format("{} sections {},{},{} add up to {} pairs; rotary_dim {} has {} "
                                   "(sections count pairs, not features)",
                                   to_string(axes.mode), s[0], s[1], s[2], s[0] + s[1] + s[2],
                                   rotary_dim, rotary_dim / 2));
  }
}

std::string_view to_string(AxisMode mode) {
  switch (mode) {
    case AxisMode::none: return "none";
    case AxisMode::mrope: return "mrope";
    case AxisMode::imrope: return "imrope";
    case AxisMode::vision: return "vision";
  }
  return "?";
}

AxisMode parse_axis_mode(std::string_view text) {
  for (const AxisMode mode : kAllAxisModes) {
    if (text == to_string(mode)) return mode;
  }
  throw InvalidInput(fmt::format("unknown axis mode '{}' (none, mrope, imrope, vision)", text));
}

PositionAxes sections_for(const PositionAxes& axes, int rotary_dim) {
  const int had = axes.sections[0] + axes.sections[1] + axes.sections[2];
  const int pairs = rotary_dim / 2;
  if (axes.mode == AxisMode::none || had == pairs || had == 0) return axes;
  PositionAxes scaled = axes;
  scaled.sections[1] = axes.sections[1] * pairs / had;
  scaled.sections[2] = axes.sections[2] * pairs / had;
  scaled.sections[0] = pairs - scaled.sections[1] - scaled.sections[2];
  return scaled;
}

std::string describe(const PositionAxes& axes) {
  if (axes.mode == AxisMode::none) return {};
  if (axes.mode == AxisMode::vision) {
    return fmt::format("axes=vision sections={},{}", axes.sections[0], axes.sections[1]);
  }
  return fmt::format("axes={} sections={},{},{}", to_string(axes.mode), axes.sections[0],
                     axes.sections[1], axes.sections[2]);
}

}  // namespace ropecheck
