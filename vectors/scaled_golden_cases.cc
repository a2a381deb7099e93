// The scaled golden cases: linear, NTK, dynamic NTK below and above its switch, YaRN (attention
// factor on cos/sin, an explicit override, untruncated, DeepSeek's mscale ratio), Llama 3 and
// LongRoPE (short, long and the first length past the switch), in fp32, bf16 and fp16.
// Parameters are those of the named models' configs; head counts are cut down (same q/kv ratio
// where it fits) to keep the set small.
// Add cases, do not edit them: ports compare against these bytes.
//   ropecheck vectors --out /tmp/golden
#include "vectors/scaled_golden_cases.h"

#include <cstdint>
#include <optional>

namespace ropecheck {
namespace {

// Names of their own: with unity builds this file may share a translation unit with
// golden_cases.cc, whose anonymous namespace has kInterleaved, kFp32 and spec().
constexpr auto kInterleavedPairs = Layout::interleaved;
constexpr auto kHalfSplitPairs = Layout::half_split;
constexpr auto kStoredFp32 = StorageType::fp32;
constexpr auto kStoredBf16 = StorageType::bf16;
constexpr auto kStoredFp16 = StorageType::fp16;

// LongRoPE factor lists for 48 pairs (rotary_dim 96: Phi-3-mini's head_dim, Phi-4-mini's rotary
// part): shaped like Phi-3's (short near 1 rising to about 3, long an S-curve up to about 64),
// not copied from a model. Every entry is a multiple of 2^-6, exact in fp32, so HF's float32
// ext_factors tensor holds the same numbers as the double spec.
const std::vector<double> kLongRopeShort = {
    1.0,      1.0,      1.0,      1.0,      1.0,      1.0,      1.0,      1.0,
    1.015625, 1.015625, 1.015625, 1.03125,  1.03125,  1.046875, 1.046875, 1.0625,
    1.078125, 1.09375,  1.109375, 1.125,    1.140625, 1.171875, 1.1875,   1.21875,
    1.25,     1.28125,  1.328125, 1.359375, 1.40625,  1.453125, 1.5,      1.546875,
    1.59375,  1.65625,  1.71875,  1.78125,  1.859375, 1.921875, 2.0,      2.078125,
    2.171875, 2.265625, 2.359375, 2.453125, 2.5625,   2.671875, 2.78125,  2.90625};
const std::vector<double> kLongRopeLong = {
    1.203125,  1.28125,   1.359375,  1.484375,  1.640625,  1.859375,  2.140625,  2.5,
    2.984375,  3.609375,  4.421875,  5.46875,   6.8125,    8.515625,  10.609375, 13.171875,
    16.234375, 19.765625, 23.734375, 28.03125,  32.5,      36.96875,  41.265625, 45.234375,
    48.765625, 51.828125, 54.390625, 56.484375, 58.1875,   59.53125,  60.578125, 61.390625,
    62.015625, 62.5,      62.859375, 63.140625, 63.359375, 63.515625, 63.640625, 63.71875,
    63.796875, 63.84375,  63.890625, 63.90625,  63.9375,   63.953125, 63.96875,  63.96875};

RopeSpec scaled_spec(int head_dim, int rotary_dim, double base, Layout layout,
                     RopeScaling scaling) {
  return {head_dim, rotary_dim, base, layout, AnglePrecision::fp64, std::move(scaling), {}};
}

RopeScaling linear(double factor) {
  RopeScaling s;
  s.kind = ScalingKind::linear;
  s.factor = factor;
  return s;
}

RopeScaling ntk(double factor) {
  RopeScaling s;
  s.kind = ScalingKind::ntk;
  s.factor = factor;
  return s;
}

RopeScaling dynamic_ntk(double factor, std::int64_t original_max, std::int64_t sequence_length) {
  RopeScaling s;
  s.kind = ScalingKind::dynamic_ntk;
  s.factor = factor;
  s.original_max_position = original_max;
  s.sequence_length = sequence_length;
  return s;
}

// beta_fast 32 and beta_slow 1 (HF's defaults) in every model below.
RopeScaling yarn(double factor, std::int64_t original_max, bool truncate = true,
                 std::optional<double> attention = std::nullopt) {
  RopeScaling s;
  s.kind = ScalingKind::yarn;
  s.factor = factor;
  s.original_max_position = original_max;
  s.beta_fast = 32.0;
  s.beta_slow = 1.0;
  s.truncate = truncate;
  s.attention_factor = attention;
  return s;
}

// DeepSeek's YaRN: the attention factor from mscale and mscale_all_dim (scaling.h).
RopeScaling yarn_mscale(double factor, std::int64_t original_max, double mscale, double mscale_all_dim) {
  RopeScaling s = yarn(factor, original_max);
  s.mscale = mscale;
  s.mscale_all_dim = mscale_all_dim;
  return s;
}

RopeScaling llama3(double factor, std::int64_t original_max) {
  RopeScaling s;
  s.kind = ScalingKind::llama3;
  s.factor = factor;
  s.original_max_position = original_max;
  s.low_freq_factor = 1.0;
  s.high_freq_factor = 4.0;
  return s;
}

// Phi-3/Phi-4-mini: max_position_embeddings 131072 over original 4096, factor 32 (what the
// default attention factor sqrt(1 + ln 32 / ln 4096) is computed from).
RopeScaling longrope(std::int64_t sequence_length) {
  RopeScaling s;
  s.kind = ScalingKind::longrope;
  s.factor = 32.0;
  s.original_max_position = 4096;
  s.sequence_length = sequence_length;
  s.short_factor = kLongRopeShort;
  s.long_factor = kLongRopeLong;
  return s;
}

std::vector<GoldenRopeCase> make_cases() {
  return {
      // fp32 ------------------------------------------------------------------------------------
      {"linear_f4_d128_half_split_b1e4_llama2_16k",
       "LLaMA-2 7B stretched 4x by linear position interpolation (SuperHOT/LongChat-style 16k), "
       "positions up to 16383",
       scaled_spec(128, 128, 1e4, kHalfSplitPairs, linear(4)), kStoredFp32, 4, 2,
       {0, 1, 4095, 8192, 16383}},
      {"ntk_f4_d128_half_split_b1e4_llama2",
       "LLaMA-2 7B with a static NTK-aware base, 1e4 * 4^(128/126)",
       scaled_spec(128, 128, 1e4, kHalfSplitPairs, ntk(4)), kStoredFp32, 4, 2, {0, 1, 4096, 16383}},
      {"dynamic_ntk_f2_d128_half_split_b1e4_below_switch",
       "dynamic NTK (factor 2 over 4096) at sequence length 4096: not past the switch, the "
       "unscaled table",
       scaled_spec(128, 128, 1e4, kHalfSplitPairs, dynamic_ntk(2, 4096, 4096)), kStoredFp32, 4, 2,
       {0, 1, 2048, 4095}},
      {"dynamic_ntk_f2_d128_half_split_b1e4_above_switch",
       "dynamic NTK (factor 2 over 4096) at sequence length 16384: base 1e4 * 7^(128/126)",
       scaled_spec(128, 128, 1e4, kHalfSplitPairs, dynamic_ntk(2, 4096, 16384)), kStoredFp32, 4, 2,
       {0, 1, 4096, 16383}},
      {"yarn_f4_d128_half_split_b1e6_qwen25_7b",
       "Qwen2.5 7B with YaRN factor 4 over 32768 (its long-context config); attention factor "
       "0.1 ln 4 + 1 on cos/sin; 28 q / 4 kv heads cut to 7 / 1",
       scaled_spec(128, 128, 1e6, kHalfSplitPairs, yarn(4, 32768)), kStoredFp32, 7, 1,
       {0, 1, 32767, 65536, 131071}},
      {"yarn_f40_d64_interleaved_b1e4_deepseek_v3",
       "DeepSeek-V3's rotary part (qk_rope_head_dim 64, interleaved as its reference code) with "
       "YaRN factor 40 over 4096; mscale = mscale_all_dim = 1 make the attention factor on cos/sin "
       "exactly 1 (attention_factor override), one shared k head",
       scaled_spec(64, 64, 1e4, kInterleavedPairs, yarn(40, 4096, true, 1.0)), kStoredFp32, 8, 1,
       {0, 1, 4095, 65536, 163839}},
      {"llama3_f8_d128_half_split_b5e5_llama31_8b",
       "LLaMA-3.1 8B: llama3 scaling, factor 8, low/high_freq_factor 1/4 over 8192; 32 q / 8 kv "
       "heads cut to 4 / 1",
       scaled_spec(128, 128, 5e5, kHalfSplitPairs, llama3(8, 8192)), kStoredFp32, 4, 1,
       {0, 1, 8191, 65536, 131071}},
      {"longrope_d96_half_split_b1e4_phi3_mini_short",
       "Phi-3-mini-128k-shaped LongRoPE at sequence length 4096 = original: short factors",
       scaled_spec(96, 96, 1e4, kHalfSplitPairs, longrope(4096)), kStoredFp32, 4, 4,
       {0, 1, 2048, 4095}},
      {"longrope_d96_half_split_b1e4_phi3_mini_long",
       "Phi-3-mini-128k-shaped LongRoPE at sequence length 131072: long factors",
       scaled_spec(96, 96, 1e4, kHalfSplitPairs, longrope(131072)), kStoredFp32, 4, 4,
       {0, 1, 4096, 65536, 131071}},
      {"longrope_d96_half_split_b1e4_phi3_mini_boundary",
       "LongRoPE at sequence length 4097, the first past the switch (position 4096 = original): "
       "long factors as HF transformers chooses; vLLM's rule (a position > original) picks short",
       scaled_spec(96, 96, 1e4, kHalfSplitPairs, longrope(4097)), kStoredFp32, 4, 4,
       {4093, 4094, 4095, 4096}},
      // bf16 ------------------------------------------------------------------------------------
      {"bf16_llama3_f8_d128_interleaved_b5e5_llama31_8b_meta",
       "LLaMA-3.1 8B in bf16 as Meta's reference code runs it (interleaved pairs, apply_scaling)",
       scaled_spec(128, 128, 5e5, kInterleavedPairs, llama3(8, 8192)), kStoredBf16, 4, 1,
       {0, 1, 8191, 131071}},
      {"bf16_llama3_f32_d64_half_split_b5e5_llama32_1b",
       "LLaMA-3.2 1B in bf16: llama3 scaling, factor 32 over 8192",
       scaled_spec(64, 64, 5e5, kHalfSplitPairs, llama3(32, 8192)), kStoredBf16, 4, 1,
       {0, 1, 8192, 131071}},
      {"bf16_yarn_f32_d64_half_split_b15e4_gpt_oss_untruncated",
       "gpt-oss in bf16: YaRN factor 32 over 4096, base 150000, truncate false (the raw "
       "correction dims are the ramp's ends); attention factor 0.1 ln 32 + 1 on cos/sin",
       scaled_spec(64, 64, 1.5e5, kHalfSplitPairs, yarn(32, 4096, false)), kStoredBf16, 8, 1,
       {0, 1, 4096, 131071}},
      {"bf16_longrope_d128_half_split_r96_b1e4_phi4_mini_short",
       "Phi-4-mini-shaped in bf16: 96 of 128 features rotated (partial_rotary_factor 0.75), "
       "LongRoPE at sequence length 4096: short factors; 24 q / 8 kv heads cut to 6 / 2",
       scaled_spec(128, 96, 1e4, kHalfSplitPairs, longrope(4096)), kStoredBf16, 6, 2,
       {0, 1, 2, 4095}},
      {"bf16_longrope_d128_half_split_r96_b1e4_phi4_mini_long",
       "Phi-4-mini-shaped in bf16, LongRoPE at sequence length 131072: long factors",
       scaled_spec(128, 96, 1e4, kHalfSplitPairs, longrope(131072)), kStoredBf16, 6, 2,
       {0, 4096, 65536, 131071}},
      // fp16 ------------------------------------------------------------------------------------
      {"fp16_linear_f2_d64_interleaved_b1e4",
       "fp16, linear position interpolation by 2, interleaved pairs",
       scaled_spec(64, 64, 1e4, kInterleavedPairs, linear(2)), kStoredFp16, 4, 4,
       {0, 1, 2047, 8191}},
      {"fp16_ntk_f8_d128_half_split_b1e4",
       "fp16, static NTK-aware base 1e4 * 8^(128/126)",
       scaled_spec(128, 128, 1e4, kHalfSplitPairs, ntk(8)), kStoredFp16, 4, 2, {0, 1, 4096, 32767}},
      {"fp16_dynamic_ntk_f4_d128_half_split_b5e5_below_switch",
       "fp16, dynamic NTK (factor 4 over 8192) at sequence length 8192: the unscaled table",
       scaled_spec(128, 128, 5e5, kHalfSplitPairs, dynamic_ntk(4, 8192, 8192)), kStoredFp16, 4, 2,
       {0, 1, 4096, 8191}},
      {"fp16_dynamic_ntk_f4_d128_half_split_b5e5_above_switch",
       "fp16, dynamic NTK (factor 4 over 8192) at sequence length 16384: base 5e5 * 5^(128/126) "
       "(not vLLM's one table for 4 * 8192)",
       scaled_spec(128, 128, 5e5, kHalfSplitPairs, dynamic_ntk(4, 8192, 16384)), kStoredFp16, 4, 2,
       {0, 8192, 12288, 16383}},
      {"fp16_yarn_f4_d128_half_split_b1e6_qwen25_7b",
       "Qwen2.5 7B's YaRN (factor 4 over 32768) in fp16; attention factor on cos/sin",
       scaled_spec(128, 128, 1e6, kHalfSplitPairs, yarn(4, 32768)), kStoredFp16, 4, 1,
       {0, 1, 32768, 131071}},
  };
}

}  // namespace

const std::vector<GoldenRopeCase>& scaled_golden_rope_cases() {
  static const std::vector<GoldenRopeCase> cases = make_cases();
  return cases;
}

const std::vector<GoldenRopeCase>& mscale_golden_rope_cases() {
  static const std::vector<GoldenRopeCase> cases = {
      // DeepSeek's configs set mscale = mscale_all_dim (a = 1, as the deepseek_v3 case above);
      // unequal ones show a port that takes 0.1 ln(factor) + 1, or one get_mscale alone.
      {"yarn_f40_d64_interleaved_b1e4_mscale_ratio",
       "DeepSeek-V3's rotary part (qk_rope_head_dim 64, interleaved) with YaRN factor 40 over 4096 "
       "and mscale 1 over mscale_all_dim 0.707: attention factor get_mscale(40, 1) / get_mscale(40, "
       "0.707) on cos/sin, one shared k head",
       scaled_spec(64, 64, 1e4, kInterleavedPairs, yarn_mscale(40, 4096, 1.0, 0.707)), kStoredFp32, 8, 1,
       {0, 1, 4095, 65536, 163839}},
  };
  return cases;
}

}  // namespace ropecheck
