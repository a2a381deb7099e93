/* The attention plugin ABI: an outside causal (or full) attention, such as llama.cpp's
 * ggml_flash_attn_ext (plugins/peers/ggml), verified by ropecheck's attention properties and
 * benchmarked beside its own attention (attention_blas, attention_fused) on the same problems.
 *
 *   ropecheck list --plugin build/plugins/ggml_flash_attn.so     # what ropecheck read from it
 *   ropecheck verify --plugin build/plugins/ggml_flash_attn.so   # every attention property
 *
 * Export ONE function,
 *
 *   ROPECHECK_PLUGIN_EXPORT const ropecheck_attention_plugin_v1* ropecheck_attention_plugin_entry(void);
 *
 * instead of plugin.h's ropecheck_plugin_entry. Unlike a RoPE plugin, an attention plugin is
 * loaded into ropecheck's own process (a child process first loads it, inits it, queries it and
 * tears it down, so that a library that crashes or fails there is refused with the reason): its
 * calls are timed on the same clocks and the same memory as the built-in attention, and `verify`
 * runs it in its worker processes (a crash fails the subject, as for a built-in). There are no
 * guard bytes: write the memory you are given, nothing else.
 *
 * The problem (ropecheck's impls/attention/attention.h): per q head h, with the kv head
 * h / (q_heads / kv_heads) (grouped-query attention),
 *   out[i][h] = sum_j softmax_j(scale * q[i][h] . k[j][kvh]) v[j][kvh],
 * j over 0..i (causal) or every token; scale = 1/sqrt(head_dim). RoPE, when the case has it,
 * was applied to q and k by ropecheck before the call (its own kernel): the plugin attends.
 *
 * init and the status codes are plugin.h's (ROPECHECK_PLUGIN_OK, _UNSUPPORTED, _ERROR).
 * Versioning as in plugin.h: abi_version and struct_size first; structs the host fills carry
 * their own struct_size; reserved fields are zero.
 */
#ifndef ROPECHECK_ATTENTION_PLUGIN_H_
#define ROPECHECK_ATTENTION_PLUGIN_H_

#include <stdint.h>

#include "ropecheck/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ROPECHECK_ATTENTION_PLUGIN_ABI_V1 1u
#define ROPECHECK_ATTENTION_PLUGIN_ENTRY_SYMBOL "ropecheck_attention_plugin_entry"

/* What the attention keeps K and V in: ropecheck derives its bound from it (docs/tolerance.md,
 * "Attention"). FP32: every operation in fp32. FP16: K and V rounded to binary16 once (as
 * llama.cpp's F16 KV cache stores them), everything else fp32. Declare what the library does:
 * whatever else it rounds to 16 bits is an error beyond its bound, and fails. */
typedef struct ropecheck_attention_capabilities {
  uint32_t struct_size;   /* set by the host: sizeof the host's struct */
  uint32_t kv_dtype;      /* ROPECHECK_DTYPE_FP32 or ROPECHECK_DTYPE_FP16 (plugin.h) */
  int32_t max_head_dim;   /* largest head_dim handled; 0: no limit */
  uint32_t reserved[5];   /* zero */
} ropecheck_attention_capabilities;

/* One call (filled by the host). q is [tokens][q_heads][head_dim], k and v are
 * [tokens][kv_heads][head_dim], out is [tokens][q_heads][head_dim]: contiguous, row-major fp32,
 * any alignment. q, k and v are read-only; write every element of out. tokens >= 1, kv_heads >= 1
 * divides q_heads, head_dim >= 1. */
typedef struct ropecheck_attention_call {
  uint32_t struct_size;  /* sizeof the host's struct */
  int32_t threads;       /* use at most this many threads (1: this one only) */
  int64_t tokens;
  int64_t q_heads;
  int64_t kv_heads;
  int32_t head_dim;
  int32_t causal;        /* nonzero: query i sees keys 0..i; zero: every key */
  const float* q;
  const float* k;
  const float* v;
  float* out;
  void* reserved[4];     /* NULL */
} ropecheck_attention_call;

/* What ropecheck_attention_plugin_entry returns. The child that tries the library calls init,
 * query_capabilities and teardown once each. Then init (optional) is called once in each process
 * that calls attend, before its first call there (verify's workers are forks: a context's threads
 * do not cross a fork), attend for every call, teardown (optional) when that process is done with
 * it. init's max_threads is the largest team a call may ask (call->threads: the case's, as
 * attention_blas's team); a plugin may use fewer (ggml's pool: at most the CPUs it may run on). */
typedef struct ropecheck_attention_plugin_v1 {
  uint32_t abi_version; /* ROPECHECK_ATTENTION_PLUGIN_ABI_V1 */
  uint32_t struct_size; /* sizeof(ropecheck_attention_plugin_v1) */
  const char* name;     /* [A-Za-z0-9_.-]+, at most 64 bytes: the id is "plugin/<name>" */
  const char* summary;  /* one line for `ropecheck list`; may be NULL */
  int32_t (*init)(const ropecheck_plugin_init_args* args, void** context);
  int32_t (*query_capabilities)(void* context, ropecheck_attention_capabilities* caps);
  /* Attends; returns ROPECHECK_PLUGIN_OK, _UNSUPPORTED (a SKIPPED case) or _ERROR (FAILED). */
  int32_t (*attend)(void* context, const ropecheck_attention_call* call);
  void (*teardown)(void* context);
  void* reserved[4];    /* NULL */
} ropecheck_attention_plugin_v1;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ROPECHECK_ATTENTION_PLUGIN_H_ */
