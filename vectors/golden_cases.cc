// The golden-vector cases: both layouts, head_dim 64/80/96/128/256, partial rotary, GQA/MQA head
// counts, bases 1e4/5e5/1e6, positions 0..2^20 (prefill, gapped, repeated, unsorted, decode
// offsets), fp32, bf16 and fp16 (subnormal and near-overflow inputs included); the frequency-scaled
// cases of scaled_golden_cases.cc and the multi-axis ones of axes_golden_cases.cc after them; and
// sinusoidal tables. Few tokens each: the set
// stays under 4 MB.
//   ropecheck vectors --out /tmp/golden
#include "vectors/golden_cases.h"

#include <algorithm>
#include <cmath>

#include "vectors/axes_golden_cases.h"
#include "vectors/backward_golden_cases.h"
#include "vectors/scaled_golden_cases.h"

namespace ropecheck {
namespace {

constexpr std::int64_t k2Pow20 = std::int64_t{1} << 20;

RopeSpec spec(int head_dim, int rotary_dim, double base, Layout layout) {
  return {head_dim, rotary_dim, base, layout, AnglePrecision::fp64, {}, {}};
}

constexpr auto kInterleaved = Layout::interleaved;
constexpr auto kHalfSplit = Layout::half_split;
constexpr auto kFp32 = StorageType::fp32;
constexpr auto kBf16 = StorageType::bf16;
constexpr auto kFp16 = StorageType::fp16;

// Subnormal case: inputs in [-2^-14, 2^-14), all under fp16's smallest normal (multiples of
// 2^-24), so most outputs are subnormal too and a port that flushes them to zero fails.
constexpr float kSubnormalScale = 0x1p-15f;
// Near-range case: inputs in [-45056, 45056), pair norms up to 45056 sqrt(2) = 63718 < 65504:
// outputs reach fp16's top binade [32768, 65504] and stay finite, with no room for a port that
// overshoots |p| (or computes in fp16) by more than about 3%.
constexpr float kNearMaxScale = 0x1.6p14f;

std::vector<GoldenRopeCase> unscaled_rope_cases() {
  return {
      // fp32 ----------------------------------------------------------------------------------
      {"d64_interleaved_b1e4_prefill", "RoFormer-sized heads, a prefill from position 0",
       spec(64, 64, 1e4, kInterleaved), kFp32, 8, 8, {0, 1, 2, 3, 4, 5, 6, 7}},
      {"d64_half_split_b1e4_prefill", "the same in the HF / GPT-NeoX layout",
       spec(64, 64, 1e4, kHalfSplit), kFp32, 8, 8, {0, 1, 2, 3, 4, 5, 6, 7}},
      {"d64_half_split_r32_b1e4_gapped", "partial rotary (rotary_dim = head_dim/2), MQA, sorted gapped positions",
       spec(64, 32, 1e4, kHalfSplit), kFp32, 4, 1, {0, 2, 3, 10, 100, 1000, 65536, k2Pow20}},
      {"d80_interleaved_r64_b1e4_gapped", "64 of 80 features rotated, 4 q heads per kv head",
       spec(80, 64, 1e4, kInterleaved), kFp32, 4, 1, {1, 5, 6, 31, 512, 4095, 131071, k2Pow20}},
      {"d80_half_split_r64_b1e4_repeated", "64 of 80 features rotated, repeated positions",
       spec(80, 64, 1e4, kHalfSplit), kFp32, 8, 8, {0, 0, 7, 7, 7, 4096, 4096, k2Pow20}},
      {"d96_half_split_b1e4_repeated", "head_dim 96 (Phi-3), 4 q heads per kv head, repeats",
       spec(96, 96, 1e4, kHalfSplit), kFp32, 8, 2, {3, 3, 3, 9, k2Pow20, k2Pow20}},
      {"d96_interleaved_b1e6_unsorted", "positions in no order (packed sequences, speculative decoding)",
       spec(96, 96, 1e6, kInterleaved), kFp32, 4, 4, {42, 7, k2Pow20, 0, 4095}},
      {"d128_interleaved_b1e4_llama2_7b", "LLaMA-2 7B (Meta's interleaved pairs), 32 heads, first tokens",
       spec(128, 128, 1e4, kInterleaved), kFp32, 32, 32, {0, 1}},
      {"d128_half_split_b5e5_llama3_8b_decode_4095", "LLaMA-3 8B (HF layout), one token at 4095",
       spec(128, 128, 5e5, kHalfSplit), kFp32, 32, 8, {4095}},
      {"d128_half_split_b5e5_llama3_8b_decode_131071", "LLaMA-3 8B, one token at 131071 (128k context)",
       spec(128, 128, 5e5, kHalfSplit), kFp32, 32, 8, {131071}},
      {"d128_half_split_b1e6_qwen2_7b_decode_2pow20", "Qwen2 7B (28 q / 4 kv heads), one token at 2^20",
       spec(128, 128, 1e6, kHalfSplit), kFp32, 28, 4, {k2Pow20}},
      {"d128_interleaved_b5e5_decode_run_2pow20", "consecutive decode steps ending at 2^20",
       spec(128, 128, 5e5, kInterleaved), kFp32, 4, 1, {k2Pow20 - 3, k2Pow20 - 2, k2Pow20 - 1, k2Pow20}},
      {"d128_half_split_r64_b1e4_partial", "partial rotary in the HF layout (rotary_dim = head_dim/2)",
       spec(128, 64, 1e4, kHalfSplit), kFp32, 8, 8, {0, 1, 2, 3, 1000, 1001}},
      {"d256_interleaved_r64_b1e4_gptj", "GPT-J (64 of 256 features, interleaved), decode offsets",
       spec(256, 64, 1e4, kInterleaved), kFp32, 4, 4, {2045, 2046, 2047, 2048}},
      {"d256_half_split_b1e4_gemma_mqa", "Gemma 2B (head_dim 256, 8 q heads, 1 kv head)",
       spec(256, 256, 1e4, kHalfSplit), kFp32, 8, 1, {0, 1, 2, 3}},
      // bf16: inputs are bf16 values; expected is the exact rotation of those values --------
      {"bf16_d128_half_split_b5e5_llama3_8b_prefill", "LLaMA-3 8B in bf16, a prefill from 0",
       spec(128, 128, 5e5, kHalfSplit), kBf16, 32, 8, {0, 1, 2, 3}},
      {"bf16_d64_interleaved_b1e4_gapped", "bf16, sorted gapped positions",
       spec(64, 64, 1e4, kInterleaved), kBf16, 8, 8, {0, 5, 64, 4095, 131071, k2Pow20}},
      {"bf16_d80_half_split_r64_b1e4_decode_131071", "bf16, 64 of 80 features, one token at 131071",
       spec(80, 64, 1e4, kHalfSplit), kBf16, 4, 1, {131071}},
      {"bf16_d128_interleaved_r64_b1e6_decode_2pow20", "bf16, half the features rotated, one token at 2^20",
       spec(128, 64, 1e6, kInterleaved), kBf16, 8, 8, {k2Pow20}},
      {"bf16_d256_half_split_b1e4_gemma_mqa", "Gemma 2B in bf16, repeated positions",
       spec(256, 256, 1e4, kHalfSplit), kBf16, 8, 1, {9, 9}},
      // fp16: inputs are fp16 values (subnormals included); expected is their exact rotation --
      {"fp16_d128_half_split_b5e5_llama3_prefill", "LLaMA-3-shaped heads in fp16 (8 q, 2 kv), a prefill from 0",
       spec(128, 128, 5e5, kHalfSplit), kFp16, 8, 2, {0, 1, 2, 3}},
      {"fp16_d128_interleaved_b1e6_decode_2pow20", "fp16, one token at 2^20, 8 q heads per kv head",
       spec(128, 128, 1e6, kInterleaved), kFp16, 8, 1, {k2Pow20}},
      {"fp16_d80_half_split_r32_b1e4_phi2",
       "Phi-2 (32 of 80 features rotated, HF layout) in fp16, decode offsets",
       spec(80, 32, 1e4, kHalfSplit), kFp16, 4, 4, {0, 1, 2047, 2048}},
      {"fp16_d64_interleaved_b1e4_subnormal", "fp16 inputs in [-2^-14, 2^-14): subnormal inputs and outputs",
       spec(64, 64, 1e4, kInterleaved), kFp16, 4, 4, {0, 1, 100, 65536}, kSubnormalScale},
      {"fp16_d128_half_split_b1e4_near_max",
       "fp16 inputs up to 45056, pair norms up to 63718 < 65504: finite outputs in the top binade",
       spec(128, 128, 1e4, kHalfSplit), kFp16, 4, 1, {0, 1, 4095, 131071}, kNearMaxScale},
  };
}

// The unscaled cases first, in their original order, then the scaled ones, then the multi-axis
// ones, then the scaled ones added since, then the backward pass's: a manifest reader that
// indexes cases by position keeps working.
const std::vector<GoldenRopeCase>& rope_cases() {
  static const std::vector<GoldenRopeCase> cases = [] {
    auto all = unscaled_rope_cases();
    const auto& scaled = scaled_golden_rope_cases();
    all.insert(all.end(), scaled.begin(), scaled.end());
    const auto& axes = axes_golden_rope_cases();
    all.insert(all.end(), axes.begin(), axes.end());
    const auto& mscale = mscale_golden_rope_cases();
    all.insert(all.end(), mscale.begin(), mscale.end());
    const auto& backward = backward_golden_rope_cases();
    all.insert(all.end(), backward.begin(), backward.end());
    return all;
  }();
  return cases;
}

// Positions up to 2^16, the range of the sinusoidal properties: far past any sinusoidal model's
// context, and where the double angle pos * w_i is still accurate to far below an fp32 ulp.
const std::vector<GoldenSinusoidalCase>& sinusoidal_cases() {
  static const std::vector<GoldenSinusoidalCase> cases = {
      {"sinusoidal_d512_b1e4", "the Transformer (base) table, d_model 512 (seed 003)",
       {512, 1e4}, {0, 1, 2, 3, 4, 5, 6, 7, 100, 4095}},
      {"sinusoidal_d64_b1e4_gapped", "a small table at gapped positions",
       {64, 1e4}, {0, 1, 2, 511, 4096, 65535, 65536}},
      {"sinusoidal_d768_b1e4", "d_model 768, the first tokens",
       {768, 1e4}, {0, 1, 2, 3}},
  };
  return cases;
}

std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

std::span<const GoldenRopeCase> golden_rope_cases() { return rope_cases(); }
std::span<const GoldenSinusoidalCase> golden_sinusoidal_cases() { return sinusoidal_cases(); }

std::vector<float> golden_inputs(std::string_view case_name, std::string_view tensor,
                                 std::size_t count, StorageType dtype, float scale) {
  std::uint64_t state = fnv1a(std::string(case_name) + "/" + std::string(tensor));
  std::vector<float> values(count);
  for (auto& v : values) {
    // 24 bits: k * 2^-22 - 2 is exact in fp32 for every k < 2^24.
    const auto k = static_cast<std::int64_t>(splitmix64(state) >> 40);
    const float unit = static_cast<float>(k - (std::int64_t{1} << 23)) * 0x1p-22f;
    v = round_to_storage(unit * scale, dtype);
  }
  return values;
}

Fp16 fp16_from_double(double x) {
  if (!std::isfinite(x)) return fp16_from_float(static_cast<float>(x));  // Inf, NaN
  // The fp16 spacing at |x|: 2^(e - 10) in a normal binade 2^e (e >= -14), 2^-24 under it
  // (subnormals; ilogb(0) is hugely negative, so 0 lands here too). x / spacing is exact
  // (a power of two, far from double's range ends), nearbyint rounds it to nearest even in the
  // default rounding mode, and an even multiple of the spacing is an even fp16 significand.
  const double spacing = std::ldexp(1.0, std::max(std::ilogb(x), -14) - 10);
  const double rounded = std::nearbyint(x / spacing) * spacing;
  // `rounded` is an fp16 value, or +-65536 when x >= 65520 (fp16_from_float takes that to Inf):
  // exact in float, so this last conversion rounds nothing.
  return fp16_from_float(static_cast<float>(rounded));
}

}  // namespace ropecheck
