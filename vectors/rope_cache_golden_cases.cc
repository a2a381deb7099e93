// The fused call's golden cases: both cache layouts and MLA, every storage, FP8 scales per tensor
// and per head, multiplied (FlashInfer, TensorRT-LLM) and divided (vLLM), both padding rules, the
// engines' block sizes 16/32/64/128, and slots that cross block boundaries, repeat a block, leave
// blocks untouched, run out of order and include -1. A few tokens and a cache of two to four
// blocks each: the cache files are whole caches.
//   ropecheck vectors --out /tmp/golden
#include "vectors/rope_cache_golden_cases.h"

#include <optional>

namespace ropecheck {
namespace {

constexpr auto kCacheInterleaved = Layout::interleaved;
constexpr auto kCacheHalfSplit = Layout::half_split;
constexpr auto kScaleMultiply = ScaleDirection::multiply;
constexpr auto kScaleDivide = ScaleDirection::divide;
constexpr auto kPadSkip = PaddingRule::skip_token;
constexpr auto kPadRotateQ = PaddingRule::rotate_q_only;

RopeSpec cache_case_spec(int head_dim, double base, Layout layout) {
  return {head_dim, head_dim, base, layout, AnglePrecision::fp64, {}, {}};
}

// DeepSeek-V3's rotary part (qk_rope_head_dim 64, interleaved as its reference code): YaRN,
// factor 40 over 4096, mscale = mscale_all_dim, so the attention factor on cos/sin is 1.
RopeSpec deepseek_v3_rope() {
  RopeSpec s = cache_case_spec(64, 1e4, kCacheInterleaved);
  s.scaling.kind = ScalingKind::yarn;
  s.scaling.factor = 40.0;
  s.scaling.original_max_position = 4096;
  s.scaling.beta_fast = 32.0;
  s.scaling.beta_slow = 1.0;
  s.scaling.attention_factor = 1.0;
  return s;
}

struct CacheScales {
  std::vector<float> k, v;
  ScaleDirection direction = kScaleDivide;
};

KvCacheSpec paged_cache(CacheLayout layout, CacheStorage storage, std::int64_t blocks, std::int64_t block_size,
                  std::int64_t kv_heads, std::int64_t head_dim, PaddingRule padding, CacheScales scales = {}) {
  KvCacheSpec c;
  c.layout = layout;
  c.storage = storage;
  c.blocks = blocks;
  c.block_size = block_size;
  c.kv_heads = kv_heads;
  c.head_dim = head_dim;
  c.k_scale = std::move(scales.k);
  c.v_scale = std::move(scales.v);
  c.scale_direction = scales.direction;
  c.padding = padding;
  return c;
}

// DeepSeek's MLA row: the latent kv_c (512) then the rotated k_pe (64), one cache, k's scale.
KvCacheSpec mla_cache(CacheStorage storage, std::int64_t blocks, std::int64_t block_size, PaddingRule padding,
                      std::vector<float> scale = {}) {
  KvCacheSpec c = paged_cache(CacheLayout::mla, storage, blocks, block_size, 1, 64, padding, {std::move(scale), {}, kScaleDivide});
  c.latent_dim = 512;
  return c;
}

constexpr auto kCacheNhd = CacheLayout::nhd;
constexpr auto kCacheHnd = CacheLayout::hnd;
constexpr auto kCacheFp32 = CacheStorage::fp32;
constexpr auto kCacheBf16 = CacheStorage::bf16;
constexpr auto kCacheFp16 = CacheStorage::fp16;
constexpr auto kCacheE4m3 = CacheStorage::fp8_e4m3;
constexpr auto kCacheE5m2 = CacheStorage::fp8_e5m2;

// CacheScales as a calibration gives them (amax / 448 and its inverse, not powers of two, so that
// the scaling itself rounds), keeping |stored| under FP8's largest on inputs in [-2, 2) (a
// rotated pair's element stays under 2 sqrt(2)); the saturation cases push past it on purpose.
std::vector<GoldenRopeCacheCase> rope_cache_case_table() {
  return {
      {"nhd_fp32_bs16_d128_llama3_chunked_prefill",
       "a chunked prefill of positions 13..18 through block table [1, 3]: three slots end block 1, "
       "three start block 3; blocks 0 and 2 untouched",
       cache_case_spec(128, 5e5, kCacheHalfSplit), paged_cache(kCacheNhd, kCacheFp32, 4, 16, 1, 128, kPadSkip), 4,
       {13, 14, 15, 16, 17, 18}, {29, 30, 31, 48, 49, 50}, StorageType::fp32},
      {"hnd_fp32_bs16_d64_interleaved_decode_batch",
       "a decode batch of five sequences, one token each, slots out of order, 15 and 16 across a "
       "block boundary, two in block 0, one padding token (-1)",
       cache_case_spec(64, 1e4, kCacheInterleaved), paged_cache(kCacheHnd, kCacheFp32, 4, 16, 2, 64, kPadSkip), 4,
       {100, 7, 0, 63, 31}, {52, 7, -1, 15, 16}, StorageType::fp32},
      {"nhd_bf16_bs32_d128_cuda_graph_padding",
       "bf16 cache, a batch padded to a CUDA graph's size: two trailing -1 tokens whose q is "
       "rotated and whose cache write is skipped (rotate_q_only); slots 31 and 32 across blocks",
       cache_case_spec(128, 5e5, kCacheHalfSplit), paged_cache(kCacheNhd, kCacheBf16, 2, 32, 2, 128, kPadRotateQ), 4,
       {31, 32, 5, 0, 0}, {31, 32, 37, -1, -1}, StorageType::bf16},
      {"hnd_bf16_bs16_d128",
       "bf16 cache in FlashInfer's HND layout, three decode tokens in blocks 0, 1, 0",
       cache_case_spec(128, 1e4, kCacheHalfSplit), paged_cache(kCacheHnd, kCacheBf16, 2, 16, 2, 128, kPadSkip), 4,
       {0, 17, 1}, {0, 17, 1}, StorageType::bf16},
      {"nhd_fp16_bs16_d64_rotate_q_only",
       "fp16 cache, a padding token first, then two slots in reverse order",
       cache_case_spec(64, 1e4, kCacheInterleaved), paged_cache(kCacheNhd, kCacheFp16, 2, 16, 2, 64, kPadRotateQ), 4,
       {2, 9, 8}, {-1, 9, 8}, StorageType::fp16},
      {"hnd_fp16_bs64_d64_llama32_1b",
       "fp16 cache, LLaMA-3.2 1B's head_dim 64 and base 5e5: positions 60..64 end block 1 and "
       "continue in block 0 (block table [1, 0])",
       cache_case_spec(64, 5e5, kCacheHalfSplit), paged_cache(kCacheHnd, kCacheFp16, 2, 64, 2, 64, kPadRotateQ), 8,
       {60, 61, 62, 63, 64}, {124, 125, 126, 127, 0}, StorageType::fp16},
      {"nhd_fp8_e4m3_bs16_per_tensor_multiply_flashinfer",
       "FP8 e4m3 with one scale per tensor, multiplied as FlashInfer and TensorRT-LLM do; slots "
       "end block 2 and wrap to block 0",
       cache_case_spec(128, 1e6, kCacheHalfSplit), paged_cache(kCacheNhd, kCacheE4m3, 3, 16, 2, 128, kPadSkip, {{120.5f}, {150.25f}, kScaleMultiply}), 8,
       {0, 1, 2, 3, 4, 5}, {44, 45, 46, 47, 0, 1}, StorageType::bf16},
      {"nhd_fp8_e4m3_bs16_per_tensor_divide_vllm",
       "FP8 e4m3 with one scale per tensor, divided as vLLM's reshape_and_cache_flash does; a "
       "padding token between valid ones, block 0 written twice, block 2 untouched",
       cache_case_spec(128, 1e4, kCacheHalfSplit), paged_cache(kCacheNhd, kCacheE4m3, 3, 16, 2, 128, kPadSkip, {{0.00712f}, {0.0057f}, kScaleDivide}), 4,
       {5, 0, 20, 21, 3}, {5, -1, 20, 21, 3}, StorageType::bf16},
      {"hnd_fp8_e4m3_bs32_per_head_multiply_trtllm",
       "FP8 e4m3 with a scale per kv head, multiplied (TensorRT-LLM), HND; 31, 32, 33 across blocks",
       cache_case_spec(128, 5e5, kCacheHalfSplit),
       paged_cache(kCacheHnd, kCacheE4m3, 2, 32, 4, 128, kPadSkip, {{96.0f, 128.0f, 112.5f, 140.0f}, {150.0f, 160.0f, 170.0f, 180.5f}, kScaleMultiply}),
       8, {31, 32, 33, 63, 0}, {31, 32, 33, 63, 0}, StorageType::bf16},
      {"nhd_fp8_e4m3_bs128_per_head_divide",
       "FP8 e4m3 with a scale per kv head, divided (vLLM), block size 128; 127 and 128 across "
       "blocks, a padding token",
       cache_case_spec(64, 1e4, kCacheHalfSplit), paged_cache(kCacheNhd, kCacheE4m3, 2, 128, 2, 64, kPadSkip, {{0.0071f, 0.0093f}, {0.0047f, 0.0061f}, kScaleDivide}),
       4, {127, 128, 255, 0, 129}, {127, 128, 255, -1, 129}, StorageType::bf16},
      {"nhd_fp8_e4m3_bs16_gqa_32q_8kv_llama3_8b",
       "LLaMA-3 8B's GQA (32 q heads over 8 kv heads) into an FP8 e4m3 cache, a scale per head, "
       "divided; two decode tokens",
       cache_case_spec(128, 5e5, kCacheHalfSplit),
       paged_cache(kCacheNhd, kCacheE4m3, 2, 16, 8, 128, kPadSkip,
             {{0.0066f, 0.0071f, 0.0075f, 0.0082f, 0.0068f, 0.0090f, 0.0073f, 0.0079f},
              {0.0049f, 0.0051f, 0.0055f, 0.0060f, 0.0047f, 0.0058f, 0.0053f, 0.0062f}, kScaleDivide}),
       32, {8191, 8192}, {31, 0}, StorageType::bf16},
      {"nhd_fp8_e5m2_bs64_per_tensor_divide",
       "FP8 e5m2, one scale per tensor, divided; padding rule rotate_q_only",
       cache_case_spec(64, 1e4, kCacheHalfSplit), paged_cache(kCacheNhd, kCacheE5m2, 2, 64, 2, 64, kPadRotateQ, {{0.0213f}, {0.0178f}, kScaleDivide}), 4,
       {70, 5, 64, 6, 0}, {70, 5, 64, 6, -1}, StorageType::bf16},
      {"hnd_fp8_e5m2_bs16_per_head_multiply",
       "FP8 e5m2, a scale per kv head, multiplied, HND; slots out of order over three blocks",
       cache_case_spec(128, 1e4, kCacheHalfSplit), paged_cache(kCacheHnd, kCacheE5m2, 3, 16, 2, 128, kPadSkip, {{24.5f, 40.0f}, {33.0f, 17.25f}, kScaleMultiply}), 4,
       {47, 16, 3, 15, 32}, {47, 16, -1, 15, 32}, StorageType::bf16},
      {"nhd_fp8_e4m3_bs16_saturating_divide",
       "inputs in [-256, 256) divided by 0.5: stored values to about 724, past e4m3's 448, which "
       "must saturate to +-448 and never become NaN (pytorch/ao #1912)",
       cache_case_spec(128, 1e4, kCacheHalfSplit), paged_cache(kCacheNhd, kCacheE4m3, 2, 16, 2, 128, kPadSkip, {{0.5f}, {0.5f}, kScaleDivide}), 4,
       {3, 17, 0, 18}, {3, 17, -1, 18}, StorageType::bf16, 128.0f},
      {"hnd_fp8_e5m2_bs16_saturating_multiply",
       "inputs in [-32768, 32768) multiplied by 2: stored values to about 92682, past e5m2's "
       "57344, which must saturate to +-57344 and never become Inf",
       cache_case_spec(64, 1e4, kCacheHalfSplit), paged_cache(kCacheHnd, kCacheE5m2, 2, 16, 2, 64, kPadSkip, {{2.0f}, {2.0f}, kScaleMultiply}), 4,
       {0, 31, 16}, {0, 31, 16}, StorageType::bf16, 16384.0f},
      {"mla_bf16_bs16_deepseek_v3",
       "DeepSeek-V3's MLA cache row (kv_c 512, then k_pe 64 rotated with its YaRN) in bf16, as "
       "vLLM's concat_and_cache_mla and FlashInfer's MLA append write it; a padding token",
       deepseek_v3_rope(), mla_cache(kCacheBf16, 3, 16, kPadSkip), 4,
       {0, 1, 4095, 4096}, {15, 16, 40, -1}, StorageType::bf16},
      {"mla_fp8_e4m3_bs64_per_tensor_divide_vllm",
       "DeepSeek-V3's MLA row in FP8 e4m3, one scale for kv_c and k_pe, divided as vLLM's "
       "concat_and_cache_mla does; rotate_q_only padding",
       deepseek_v3_rope(), mla_cache(kCacheE4m3, 2, 64, kPadRotateQ, {0.0068f}), 4,
       {7, 0, 8, 9}, {127, -1, 64, 3}, StorageType::bf16},
  };
}

}  // namespace

std::span<const GoldenRopeCacheCase> golden_rope_cache_cases() {
  static const std::vector<GoldenRopeCacheCase> cases = rope_cache_case_table();
  return cases;
}

}  // namespace ropecheck
