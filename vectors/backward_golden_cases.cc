// The backward golden cases (backward_golden_cases.h): the forms a training kernel meets, each
// the gradient of a forward case's spec. Add cases, do not edit them: ports compare against
// these bytes.
#include "vectors/backward_golden_cases.h"

#include <utility>

#include "vectors/axes_golden_cases.h"

namespace ropecheck {
namespace {

// Names of their own: with unity builds this file may share a translation unit with the other
// case tables.
RopeSpec backward_spec(int head_dim, int rotary_dim, double base, Layout layout, RopeScaling scaling = {},
                       PositionAxes axes = {}) {
  RopeSpec spec{head_dim, rotary_dim, base, layout, AnglePrecision::fp64, std::move(scaling), axes};
  spec.pass = Pass::backward;
  return spec;
}

// YaRN with DeepSeek's unequal mscale pair: an attention factor a != 1, which the gradient
// carries too (a backward that drops it is a times too small).
RopeScaling backward_yarn(double factor, std::int64_t original_max, double mscale, double mscale_all_dim) {
  RopeScaling s;
  s.kind = ScalingKind::yarn;
  s.factor = factor;
  s.original_max_position = original_max;
  s.mscale = mscale;
  s.mscale_all_dim = mscale_all_dim;
  return s;
}

}  // namespace

const std::vector<GoldenRopeCase>& backward_golden_rope_cases() {
  static const std::vector<GoldenRopeCase> cases = {
      {"backward_d128_interleaved_b1e4_llama",
       "the gradient of Llama's rotation (interleaved, head_dim 128), GQA 2 / 1 heads: dx = R(m)^T dy",
       backward_spec(128, 128, 1e4, Layout::interleaved), StorageType::fp32, 2, 1, {0, 1, 4095, 131071}},
      {"backward_d128_half_split_b5e5_llama3_bf16",
       "the gradient on bf16 storage, HF's layout (Llama 3 base 5e5): dy and dx in bf16",
       backward_spec(128, 128, 5e5, Layout::half_split), StorageType::bf16, 2, 1, {0, 7, 8192, 131071}},
      {"backward_d128_r64_half_split_b1e4_neox_partial",
       "partial rotary (GPT-NeoX: 64 of 128 rotated): the tail's gradient passes through unchanged",
       backward_spec(128, 64, 1e4, Layout::half_split), StorageType::fp32, 2, 1, {0, 1, 2048, 65536}},
      {"backward_yarn_f40_d64_interleaved_b1e4_mscale_ratio",
       "DeepSeek-style YaRN factor 40 over 4096 with mscale 1 over 0.707: the attention factor "
       "multiplies the gradient too",
       backward_spec(64, 64, 1e4, Layout::interleaved, backward_yarn(40, 4096, 1.0, 0.707)), StorageType::fp32,
       2, 1, {0, 1, 4095, 65536, 163839}},
      {"backward_mrope_d128_half_split_b1e6_qwen2_vl_7b",
       "the gradient of Qwen2-VL 7B's MRoPE (2 / 1 heads): a text token, a 2 x 2 image, a text token",
       backward_spec(128, 128, 1e6, Layout::half_split, {}, {AxisMode::mrope, {16, 24, 24}}),
       StorageType::fp32, 2, 1, text_image_positions(1, 2, 2, 1)},
  };
  return cases;
}

}  // namespace ropecheck
