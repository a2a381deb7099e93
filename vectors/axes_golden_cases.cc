// The multi-axis golden cases: Qwen2-VL 7B's MRoPE (sections 16, 24, 24), Qwen3-VL's interleaved
// MRoPE (24, 20, 20) and Qwen2-VL's vision tower (head_dim 80, row and column 20 pairs each),
// head counts cut down with the q/kv ratio kept (the set stays under 4 MB). Add cases, do not edit them: ports compare
// against these bytes.
//   ropecheck vectors --out /tmp/golden
#include "vectors/axes_golden_cases.h"

#include <algorithm>
#include <cstdint>

namespace ropecheck {
namespace {

// Names of their own: with unity builds this file may share a translation unit with
// golden_cases.cc and scaled_golden_cases.cc.
RopeSpec axes_spec(int head_dim, double base, Layout layout, PositionAxes axes) {
  RopeSpec spec{head_dim, head_dim, base, layout, AnglePrecision::fp64, {}, {}};
  spec.axes = axes;
  return spec;
}

}  // namespace

std::vector<std::int64_t> text_image_positions(int text_before, int rows, int columns, int text_after) {
  std::vector<std::int64_t> p;
  const auto token = [&](std::int64_t t, std::int64_t h, std::int64_t w) { p.insert(p.end(), {t, h, w}); };
  for (int i = 0; i < text_before; ++i) token(i, i, i);
  const std::int64_t start = text_before;
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < columns; ++c) token(start, start + r, start + c);
  }
  const std::int64_t resume = start + std::max(rows, columns);
  for (int i = 0; i < text_after; ++i) token(resume + i, resume + i, resume + i);
  return p;
}

std::vector<std::int64_t> merged_patch_grid_positions(int rows, int columns) {
  std::vector<std::int64_t> p;
  for (int window_row = 0; window_row < rows; window_row += 2) {
    for (int window_column = 0; window_column < columns; window_column += 2) {
      for (int r = window_row; r < window_row + 2; ++r) {
        for (int c = window_column; c < window_column + 2; ++c) p.insert(p.end(), {r, c});
      }
    }
  }
  return p;
}

const std::vector<GoldenRopeCase>& axes_golden_rope_cases() {
  static const std::vector<GoldenRopeCase> cases = {
      {"mrope_d128_half_split_b1e6_qwen2_vl_7b",
       "Qwen2-VL 7B's MRoPE (28 q / 4 kv heads cut to 7 / 1): 3 text tokens, a 2 x 3 image, 2 text tokens",
       axes_spec(128, 1e6, Layout::half_split, {AxisMode::mrope, {16, 24, 24}}), StorageType::fp32, 7, 1,
       text_image_positions(3, 2, 3, 2)},
      {"imrope_d128_half_split_b5e6_qwen3_vl",
       "Qwen3-VL's interleaved MRoPE (32 q / 8 kv heads cut to 4 / 1): 4 text tokens, a 2 x 3 image, 1 text token",
       axes_spec(128, 5e6, Layout::half_split, {AxisMode::imrope, {24, 20, 20}}), StorageType::fp32, 4, 1,
       text_image_positions(4, 2, 3, 1)},
      {"vision_d80_half_split_b1e4_qwen2_vl_patch_grid",
       "Qwen2-VL's vision tower (head_dim 80, 16 heads cut to 2): a 4 x 4 patch grid in 2 x 2 merge windows",
       axes_spec(80, 1e4, Layout::half_split, {AxisMode::vision, {20, 20, 0}}), StorageType::fp32, 2, 2,
       merged_patch_grid_positions(4, 4)},
  };
  return cases;
}

}  // namespace ropecheck
