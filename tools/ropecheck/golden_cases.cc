// The golden-vector cases: both layouts, head_dim 64/80/96/128/256, partial rotary, GQA/MQA head
// counts, bases 1e4/5e5/1e6, positions 0..2^20 (prefill, gapped, repeated, unsorted, decode
// offsets), fp32 and bf16; and sinusoidal tables. Few tokens each: the set stays near 2 MB.
//   ropecheck vectors --out /tmp/golden
#include "golden_cases.h"

namespace ropecheck {
namespace {

constexpr std::int64_t k2Pow20 = std::int64_t{1} << 20;

RopeSpec spec(int head_dim, int rotary_dim, double base, Layout layout) {
  return {head_dim, rotary_dim, base, layout, AnglePrecision::fp64, {}};
}

constexpr auto kInterleaved = Layout::interleaved;
constexpr auto kHalfSplit = Layout::half_split;
constexpr auto kFp32 = StorageType::fp32;
constexpr auto kBf16 = StorageType::bf16;

const std::vector<GoldenRopeCase>& rope_cases() {
  static const std::vector<GoldenRopeCase> cases = {
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
  };
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
                                 std::size_t count, StorageType dtype) {
  std::uint64_t state = fnv1a(std::string(case_name) + "/" + std::string(tensor));
  std::vector<float> values(count);
  for (auto& v : values) {
    // 24 bits: k * 2^-22 - 2 is exact in fp32 for every k < 2^24.
    const auto k = static_cast<std::int64_t>(splitmix64(state) >> 40);
    v = round_to_storage(static_cast<float>(k - (std::int64_t{1} << 23)) * 0x1p-22f, dtype);
  }
  return values;
}

}  // namespace ropecheck
