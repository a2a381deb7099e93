// Multi-axis RoPE: a token positioned on several axes, each axis rotating its own section of the
// rotary pairs. Part of the RopeSpec (spec.axes), as frequency scaling is: every implementation,
// property, golden vector and plugin that takes a spec takes its axes with it.
//
// With d = rotary_dim and pairs i = 0 .. d/2 - 1, a token carries one position per axis, stored
// token-major: positions[t * axes + a] (axes = axis_count(mode)). Pair i rotates by
// m_{axis(i)} * theta_i, where:
//   none    one axis; theta_i = base^(-2i/d) as in 1D RoPE (spec.h)
//   mrope   Qwen2-VL / Qwen2.5-VL (HF apply_multimodal_rotary_pos_emb, ggml MROPE): axes t, h, w;
//           pairs [0, s_t) take t, the next s_h take h, the rest w; s_t + s_h + s_w = d/2.
//           A text token has t = h = w, and is then rotated exactly as by 1D RoPE.
//   imrope  Qwen3-VL (ggml IMROPE): the axes alternate over the pairs: pair i takes h when
//           i mod 3 = 1 and i < 3 s_h, w when i mod 3 = 2 and i < 3 s_w, else t.
//   vision  the Qwen2-VL vision tower (ggml VISION): axes row, column; pairs [0, s_0) take the
//           row, [s_0, s_0 + s_1) the column, s_0 + s_1 = d/2 (an even number of pairs: d a
//           multiple of 4, as in every vision tower), and each section restarts the
//           frequencies: the j-th pair of a section has theta_j = base^(-2j / (d/2)) (HF's
//           VisionRotaryEmbedding(head_dim/2) indexed by row and column).
// Frequency scaling composes with mrope and imrope (theta_i scaled as in 1D RoPE); no vision
// tower scales its frequencies, so vision takes none.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace ropecheck {

enum class AxisMode { none, mrope, imrope, vision };

inline constexpr AxisMode kAllAxisModes[] = {AxisMode::none, AxisMode::mrope, AxisMode::imrope,
                                             AxisMode::vision};

// Most axes a token has (mrope, imrope: t, h, w).
inline constexpr int kMaxAxes = 3;

struct PositionAxes {
  AxisMode mode = AxisMode::none;
  // Pairs per axis: t, h, w (mrope, imrope); row, column and 0 (vision); all 0 for none.
  std::array<int, kMaxAxes> sections{};

  bool operator==(const PositionAxes&) const = default;
};

// Positions per token: 1 (none), 3 (mrope, imrope), 2 (vision).
int axis_count(AxisMode mode);
inline int axis_count(const PositionAxes& axes) { return axis_count(axes.mode); }

// The axis of every pair, rotary_dim/2 entries (all 0 for none): the one definition of the
// section rules above, read by every implementation (the oracle keeps its own).
std::vector<int> pair_axes(const PositionAxes& axes, int rotary_dim);

// The frequency index of every pair: i, except for vision, where a section restarts at 0.
std::vector<int> pair_frequency_index(const PositionAxes& axes, int rotary_dim);

// Throws InvalidInput naming what is wrong: sections for none, a negative section, sections
// that do not add up to rotary_dim/2, a third section for vision.
void validate(const PositionAxes& axes, int rotary_dim);

std::string_view to_string(AxisMode mode);
AxisMode parse_axis_mode(std::string_view text);  // throws InvalidInput
std::string describe(const PositionAxes& axes);   // "axes=mrope sections=16,24,24"; "" for none

// The same axes for another rotary_dim: every section but the first scaled by the ratio of the
// pair counts (rounded down), the first taking the rest.
PositionAxes sections_for(const PositionAxes& axes, int rotary_dim);

}  // namespace ropecheck
