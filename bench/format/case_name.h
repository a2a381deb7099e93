// The names of bench.json cases: one grammar, formatted where bench/ registers a case and parsed
// where reports/ and gate/ read one. Google Benchmark appends its own suffixes to the name a case
// is registered under ("/real_time", "/threads:N"); full_name() is the name as bench.json has it.
//   RoPE:       <impl id>/<shape>/<layout>[/backward]/real_time/threads:<N>
//               kernel_bf16/avx512/llama7b_prefill512/interleaved/real_time/threads:1
//               the backward pass (core/spec.h, Pass) on the same tensors, "/backward" after the
//               layout: kernel/avx512/llama7b_prefill512/interleaved/backward/real_time/threads:1
//               a plugin, timed in its worker process at N threads of its own (manual time):
//               <impl id>/<shape>/<layout>[/backward]/threads:<N>/manual_time
//   attention:  attention_blas/causal_<H>heads/tokens:<T>/head_dim:<D>/blas_threads:<N>/real_time
//               grouped-query attention: causal_<H>heads_<KV>kv
//               an attention peer (a plugin, attention_plugin.h), at N threads of its own:
//               plugin/<name>/causal_<H>heads/tokens:<T>/head_dim:<D>/threads:<N>/real_time
//   table:      <impl id>/<table shape>/real_time
//   conversion: <conversion id>/<shape>/real_time/threads:<N>   (a 16-bit kernel's ceiling)
//               conversion_fp16/avx512/gpt2_small_prefill512/real_time/threads:1
//   rotation:   <rotation id>/<shape>/<layout>/real_time/threads:<N>   (a kernel's rotation ceiling)
//               rotation/avx2/gpt2_small_prefill512/interleaved/real_time/threads:1
//               ("rotation" is no implementation's algorithm: parse_rope_case refuses it)
//   fused cache: <impl id>/<shape>/<cache layout>_<cache storage>/real_time  (RoPE + KV-cache write)
//               fused_cache/avx512/llama3_8b_gqa_prefill4096/nhd_fp8_e4m3/real_time
// An implementation id is <algorithm>/<isa>, the storage type a suffix of the algorithm
// (kernel_bf16, complex_multiply_fp16; none for fp32): core/impl_id.h.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ropecheck::bench {

struct RopeCaseName {
  std::string impl, shape, layout;  // layout: "interleaved" or "half_split"
  int threads = 1;                  // benchmark threads; a plugin's: the threads of its call
  bool in_worker = false;           // a plugin timed in its worker (manual time)
  bool backward = false;            // the backward pass, dy in and dx out (core/spec.h)
};
std::string registered_name(const RopeCaseName& name);  // without Google Benchmark's suffixes
std::string full_name(const RopeCaseName& name);
std::optional<RopeCaseName> parse_rope_case(std::string_view full_name);

// How RoPE meets attention in a case, the first part of its name: none (attention_blas: attention
// alone), separate (attention_blas_rope: the fast kernel's pass over q and k, then attention) or
// fused (attention_fused: RoPE inside attention's blocking, query blocks rotated in cache).
enum class AttentionRope { none, separate, fused };
// The implementation id of each form: "attention_blas", "attention_blas_rope", "attention_fused".
std::string_view form_id(AttentionRope rope);
struct AttentionCaseName {
  long heads = 0, tokens = 0;
  int head_dim = 0, blas_threads = 0;  // a peer's: its own threads (ggml's n_threads)
  AttentionRope rope = AttentionRope::none;
  long kv_heads = 0;                   // 0 or heads: one kv head a q head; fewer: GQA
  std::string peer = {};               // "plugin/<name>": an attention peer (rope none), "" ours
  long kv() const { return kv_heads == 0 ? heads : kv_heads; }
  // The implementation id the report shows: the peer's, else the form's.
  std::string impl() const { return peer.empty() ? std::string(form_id(rope)) : peer; }
};
std::string registered_name(const AttentionCaseName& name);
std::string full_name(const AttentionCaseName& name);
std::optional<AttentionCaseName> parse_attention_case(std::string_view full_name);

struct TableCaseName {
  std::string impl, shape;
};
std::string registered_name(const TableCaseName& name);
std::string full_name(const TableCaseName& name);
std::optional<TableCaseName> parse_table_case(std::string_view full_name);

// A 16-bit kernel level's conversions alone on a RoPE shape's q and k
// (impls/kernels/round_trip_levels.h): "conversion_<storage>/<isa>", the kernel's id with
// "conversion" for "kernel".
struct ConversionCaseName {
  std::string conversion, shape;
  int threads = 1;
};
std::string registered_name(const ConversionCaseName& name);
std::string full_name(const ConversionCaseName& name);
std::optional<ConversionCaseName> parse_conversion_case(std::string_view full_name);
// The kernel whose ceiling the conversion is: "conversion_fp16/avx512" -> "kernel_fp16/avx512".
std::string kernel_of_conversion(std::string_view conversion);

// A SIMD kernel level's rotation alone, cos and sin in registers, on a RoPE shape's q and k
// (impls/kernels/rotation_alone_levels.h): "rotation[_<storage>]/<isa>", the kernel's id with
// "rotation" for "kernel".
struct RotationCaseName {
  std::string rotation, shape, layout;
  int threads = 1;
};
std::string registered_name(const RotationCaseName& name);
std::string full_name(const RotationCaseName& name);
std::optional<RotationCaseName> parse_rotation_case(std::string_view full_name);
// The kernel whose ceiling the rotation is: "rotation_bf16/avx2" -> "kernel_bf16/avx2".
std::string kernel_of_rotation(std::string_view rotation);

// A fused RoPE + paged KV-cache kernel (impls/fused/fused_rope_cache.h) on a cache of one layout
// and storage (core/kv_cache.h's names: nhd, hnd, mla; fp32, bf16, fp16, fp8_e4m3, fp8_e5m2).
struct FusedCacheCaseName {
  std::string impl, shape, layout, storage;
};
std::string registered_name(const FusedCacheCaseName& name);
std::string full_name(const FusedCacheCaseName& name);
std::optional<FusedCacheCaseName> parse_fused_cache_case(std::string_view full_name);

// The fused QK-norm + RoPE kernels (bench/qk_norm_rope_cases.h):
// "qk_norm_rope/<level>/<shape>/<angles>_<storage>/real_time", angles "cache" or "spec".
struct QkNormRopeCaseName {
  std::string impl, shape, angles, storage;
};
std::string registered_name(const QkNormRopeCaseName& name);
std::string full_name(const QkNormRopeCaseName& name);
std::optional<QkNormRopeCaseName> parse_qk_norm_rope_case(std::string_view full_name);

}  // namespace ropecheck::bench
