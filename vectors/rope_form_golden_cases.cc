// The call forms' golden cases: QK-norm as Qwen3 (plain weight), Gemma 3 (1 + w) and GLM-4.5
// (partial rotary, eps 1e-5) run it, in fp32, bf16 and fp16, fused (fp32 norm) and unfused (the
// norm rounded to the storage); the cos/sin cache form with a scaling composed into the cache, a
// position at its last row, partial rotary and a call without k; strided views with q's and k's
// head strides unequal and not head_dim, and DeepSeek's MLA rope parts. Four tokens each: the
// buffers are whole buffers, v and the gaps included.
//   ropecheck vectors --out /tmp/golden
#include "vectors/rope_form_golden_cases.h"

#include <utility>

namespace ropecheck {
namespace {

constexpr std::int64_t kFormTokens = 4;
constexpr auto kFormHalfSplit = Layout::half_split;
constexpr auto kFormInterleaved = Layout::interleaved;
constexpr auto kFormFp32 = StorageType::fp32;
constexpr auto kFormBf16 = StorageType::bf16;
constexpr auto kFormFp16 = StorageType::fp16;

RopeSpec form_spec(int head_dim, int rotary_dim, double base, Layout layout) {
  return {head_dim, rotary_dim, base, layout, AnglePrecision::fp64, {}, {}};
}

// vLLM's packed qkv projection [tokens][(q + 2 kv) * head_dim], q and k rotated in place through
// views of it: v lies between one token's k and the next token's q, and after the last.
FormCall packed_qkv(StorageType storage, std::int64_t q_heads, std::int64_t kv_heads, std::int64_t head_dim) {
  const std::int64_t width = (q_heads + 2 * kv_heads) * head_dim;
  FormCall call;
  call.storage = storage;
  call.elements = kFormTokens * width;
  call.q = {q_heads, 0, width, head_dim};
  call.k = {kv_heads, q_heads * head_dim, width, head_dim};
  call.regions = {{"v", {kv_heads, (q_heads + kv_heads) * head_dim, width, head_dim}, head_dim}};
  return call;
}

FormCall with_qk_norm(FormCall call, double eps, NormWeight weight, NormPrecision precision = NormPrecision::fp32) {
  call.has_norm = true;
  call.norm = {eps, weight, precision};
  return call;
}

FormCall with_cos_sin_cache(FormCall call, std::int64_t rows) {
  call.angles = AngleSource::cos_sin_cache;
  call.cache_rows = rows;
  return call;
}

// q alone (k's rows are there, not the call's): a q-only call on a packed buffer, whose k head
// stride is its head_dim.
FormCall without_k(FormCall call) {
  call.regions.insert(call.regions.begin(), FormRegion{"k (not in this call)", call.k, call.k.head_stride});
  call.k = {};
  return call;
}

// DeepSeek's MLA as vLLM calls its rotary embedding: q [tokens][heads][128 nope | 64 rope] with
// q_pe at offset 128 of each head, then the kv projection [tokens][512 latent | 64 rope] with k_pe
// at offset 512, one head, in the same buffer after q.
FormCall mla_rope_parts(StorageType storage, std::int64_t heads) {
  const std::int64_t q_row = heads * 192, q_end = kFormTokens * q_row;
  FormCall call;
  call.storage = storage;
  call.elements = q_end + kFormTokens * 576;
  call.q = {heads, 128, q_row, 192};
  call.k = {1, q_end + 512, 576, 64};
  call.regions = {{"q_nope", {heads, 0, q_row, 192}, 128}, {"kv_c (the latent)", {1, q_end, 576, 576}, 512}};
  return call;
}

// Heads padded apart: q's at a stride of 160, k's at 136, in token rows of 640 (gaps between q's
// heads, between q and k, between k's heads, after k).
FormCall padded_heads(StorageType storage) {
  FormCall call;
  call.storage = storage;
  call.elements = kFormTokens * 640;
  call.q = {2, 0, 640, 160};
  call.k = {2, 320, 640, 136};
  return call;
}

// DeepSeek-V3's rotary part (qk_rope_head_dim 64, interleaved): YaRN, factor 40 over 4096, the
// attention factor 1 (mscale = mscale_all_dim).
RopeSpec form_deepseek_v3_rope() {
  RopeSpec s = form_spec(64, 64, 1e4, kFormInterleaved);
  s.scaling.kind = ScalingKind::yarn;
  s.scaling.factor = 40.0;
  s.scaling.original_max_position = 4096;
  s.scaling.attention_factor = 1.0;
  return s;
}

// LLaMA-3.1 8B: base 5e5, Llama 3 scaling (factor 8 over 8192, low 1, high 4).
RopeSpec form_llama31_rope() {
  RopeSpec s = form_spec(128, 128, 5e5, kFormHalfSplit);
  s.scaling.kind = ScalingKind::llama3;
  s.scaling.factor = 8.0;
  s.scaling.original_max_position = 8192;
  s.scaling.low_freq_factor = 1.0;
  s.scaling.high_freq_factor = 4.0;
  return s;
}

// Qwen2.5's YaRN (factor 4 over 32768), GPT-J's interleaved pairs on half the head: the attention
// factor 0.1 ln 4 + 1 folded into the cache's cos and sin.
RopeSpec form_yarn_partial_rope() {
  RopeSpec s = form_spec(128, 64, 1e6, kFormInterleaved);
  s.scaling.kind = ScalingKind::yarn;
  s.scaling.factor = 4.0;
  s.scaling.original_max_position = 32768;
  return s;
}

constexpr auto kPlain = NormWeight::plain;
constexpr auto kOnePlus = NormWeight::one_plus;

std::vector<GoldenRopeFormCase> rope_form_case_table() {
  const RopeSpec qwen3 = form_spec(128, 128, 1e6, kFormHalfSplit);
  const RopeSpec gemma3 = form_spec(256, 256, 1e6, kFormHalfSplit);
  const RopeSpec glm45 = form_spec(128, 64, 1e6, kFormHalfSplit);
  return {
      {"qk_norm_qwen3_d128_plain_fp32_packed_qkv",
       "Qwen3's attention: q_norm and k_norm (plain weight, eps 1e-6) fused before the rotation, q and k "
       "views of the packed qkv (4 q heads, 2 kv heads), v untouched between and after them",
       qwen3, with_qk_norm(packed_qkv(kFormFp32, 4, 2, 128), 1e-6, kPlain), {0, 1, 4095, 40959}},
      {"qk_norm_qwen3_d128_plain_bf16_small_activations",
       "Qwen3 in bf16 on small activations (|x| < 2^-7): eps 1e-6 is 5% of the mean square, so the norm "
       "must add it",
       qwen3, with_qk_norm(packed_qkv(kFormBf16, 4, 2, 128), 1e-6, kPlain), {3, 17, 1000, 32767}, 0x1p-8f},
      {"qk_norm_qwen3_d128_plain_bf16_storage_precision",
       "Qwen3 as HF runs it unfused in bf16: x * rsqrt(mean(x^2) + eps) rounded to bf16, times the weight, "
       "rounded again, then rotated (precision storage)",
       qwen3, with_qk_norm(packed_qkv(kFormBf16, 2, 1, 128), 1e-6, kPlain, NormPrecision::storage),
       {0, 2, 511, 8191}},
      {"qk_norm_gemma3_d256_one_plus_bf16",
       "Gemma 3's global layers: head_dim 256, the norm's weight applied as 1 + w, eps 1e-6, base 1e6",
       gemma3, with_qk_norm(packed_qkv(kFormBf16, 2, 1, 256), 1e-6, kOnePlus), {0, 5, 1023, 131071}},
      {"qk_norm_gemma3_d256_one_plus_fp16",
       "Gemma 3's 1 + w norm with fp16 storage",
       gemma3, with_qk_norm(packed_qkv(kFormFp16, 2, 1, 256), 1e-6, kOnePlus), {1, 64, 4096, 65535}},
      {"qk_norm_glm45_d128_partial_r64_eps1e5_fp32",
       "GLM-4.5: partial rotary (64 of 128 features), eps 1e-5, plain weight; the 64 features past "
       "rotary_dim are normalized and not rotated; small activations (eps 3% of the mean square)",
       glm45, with_qk_norm(packed_qkv(kFormFp32, 4, 2, 128), 1e-5, kPlain), {0, 7, 2047, 131071}, 0x1p-6f},
      {"qk_norm_glm45_d128_partial_r64_eps1e5_bf16",
       "GLM-4.5's partial rotary and eps 1e-5 in bf16",
       glm45, with_qk_norm(packed_qkv(kFormBf16, 2, 1, 128), 1e-5, kPlain), {4, 5, 6, 100000}},
      {"cos_sin_cache_llama31_d128_fp32_last_row",
       "vLLM's rotary_emb(positions, q, k) with a cos/sin cache of 128 rows built with LLaMA-3.1's Llama 3 "
       "scaling; positions 126 and 127, the cache's last row",
       form_llama31_rope(), with_cos_sin_cache(packed_qkv(kFormFp32, 4, 2, 128), 128), {0, 100, 126, 127}},
      {"cos_sin_cache_yarn_d128_r64_interleaved_bf16",
       "a cos/sin cache of 128 rows of rotary_dim 64 < head_dim 128, YaRN (factor 4, its attention factor "
       "in the cache), GPT-J's interleaved pairs; positions out of order, the last row twice",
       form_yarn_partial_rope(), with_cos_sin_cache(packed_qkv(kFormBf16, 2, 1, 128), 128), {127, 0, 64, 127}},
      {"cos_sin_cache_d64_fp16_q_only",
       "q alone rotated from a cos/sin cache of 64 rows (k absent): k's and v's rows of the packed buffer "
       "stay as they are",
       form_spec(64, 64, 1e4, kFormHalfSplit), with_cos_sin_cache(without_k(packed_qkv(kFormFp16, 4, 2, 64)), 64),
       {63, 0, 31, 62}},
      {"mla_deepseek_v3_q_pe_k_pe_cos_sin_cache_bf16",
       "DeepSeek-V3's MLA as vLLM rotates it: q_pe at offset 128 of each [128 nope | 64 rope] head (head "
       "stride 192), k_pe at offset 512 of the [512 latent | 64 rope] row, interleaved, YaRN in the cache",
       form_deepseek_v3_rope(), with_cos_sin_cache(mla_rope_parts(kFormBf16, 4), 128), {0, 1, 64, 127}},
      {"strided_padded_heads_qk_norm_fp32",
       "q's heads at a stride of 160 and k's at 136 (neither head_dim) in token rows of 640, QK-norm "
       "before the rotation; the padding between them untouched",
       form_spec(128, 128, 1e4, kFormHalfSplit), with_qk_norm(padded_heads(kFormFp32), 1e-6, kPlain),
       {2, 9, 511, 8191}},
  };
}

}  // namespace

std::span<const GoldenRopeFormCase> golden_rope_form_cases() {
  static const std::vector<GoldenRopeFormCase> cases = rope_form_case_table();
  return cases;
}

}  // namespace ropecheck
