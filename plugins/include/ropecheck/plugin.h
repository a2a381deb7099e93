/* The ropecheck plugin ABI, version 1: how an outside RoPE kernel (a shared library, any
 * language with a C ABI) is verified exactly like a built-in implementation.
 *
 *   cc -std=c99 -shared -fPIC -o my_rope.so my_rope.c -lm
 *   ropecheck list --plugin ./my_rope.so          # what ropecheck read from it
 *   ropecheck verify --plugin ./my_rope.so        # every property, oracle agreement included
 *
 * Plain C99, explicit-width types only, no ropecheck C++ code to link: include this header and
 * export ONE function,
 *
 *   ROPECHECK_PLUGIN_EXPORT const ropecheck_plugin_v1* ropecheck_plugin_entry(void);
 *
 * returning a pointer to a struct that lives as long as the library (a static const). ropecheck
 * never runs the library in its own process: a child process dlopen()s it, calls the functions
 * below on buffers in shared memory fenced by guard bytes, and is killed and restarted when it
 * crashes, hangs or writes outside its buffers; each of those is a FAILED property with the
 * shrunk counterexample. plugins/examples/good_rope.c is a complete plugin (fp16_rope.c one on
 * fp16 storage).
 *
 * The rotation (ropecheck's README, "What is checked"): for token t at position m = positions[t],
 * rotary pair i of every head is rotated by the angle m * theta_i, theta_i = base^(-2i/rotary_dim),
 *   interleaved: pair i = features (2i, 2i+1)               [x0 y0 x1 y1 ... | tail]
 *   half_split:  pair i = features (i, i + rotary_dim/2)    [x0 x1 ... y0 y1 ... | tail]
 *   (x, y) -> (x cos - y sin, x sin + y cos); features [rotary_dim, head_dim) pass through.
 *
 * Versioning: abi_version is the first field of every version of the entry struct, struct_size
 * the second; the host reads those two, refuses a version it does not speak, and never reads
 * past struct_size. Structs the HOST fills (spec, capabilities) carry their own struct_size so
 * that a plugin built against an older header can tell which fields exist. Reserved fields are
 * zero in version 1; a plugin must not rely on them.
 */
#ifndef ROPECHECK_PLUGIN_H_
#define ROPECHECK_PLUGIN_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ROPECHECK_PLUGIN_ABI_VERSION 1u
#define ROPECHECK_PLUGIN_ENTRY_SYMBOL "ropecheck_plugin_entry"

#if defined(_WIN32)
#define ROPECHECK_PLUGIN_EXPORT __declspec(dllexport)
#else
#define ROPECHECK_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* Status codes of apply_*. */
#define ROPECHECK_PLUGIN_OK 0
/* This case is outside what the kernel does (declare it in the capabilities instead whenever
 * possible: ropecheck then never generates it). Reported as SKIPPED, neither pass nor fail. */
#define ROPECHECK_PLUGIN_UNSUPPORTED 1
/* The kernel failed (an allocation, an internal check): a FAILED property. */
#define ROPECHECK_PLUGIN_ERROR 2

/* Layouts: values of ropecheck_plugin_spec.layout; bits (1u << value) in capabilities.layouts. */
#define ROPECHECK_LAYOUT_INTERLEAVED 0 /* RoFormer, Meta LLaMA, GPT-J, ggml NORM */
#define ROPECHECK_LAYOUT_HALF_SPLIT 1  /* HF transformers, GPT-NeoX, ggml NEOX */

/* Angle precision: how the kernel forms m * theta_i before sin/cos. This is what the tolerance
 * model judges it by: fp64 (the product in double) is held to about 2 eps32 per pair; fp32
 * (float(m) * float(theta_i), HF's way) gets the extra |m theta_i| * eps32 that fp32 angles
 * cost. Declare only what the kernel really does: declaring fp64 for fp32 angles fails
 * oracle_agreement at large positions, by design. Values of ropecheck_plugin_spec.angle_precision;
 * bits (1u << value) in capabilities.angle_precisions. */
#define ROPECHECK_ANGLES_FP32 0
#define ROPECHECK_ANGLES_FP64 1

/* Element types of q and k; bits in capabilities.dtypes. */
#define ROPECHECK_DTYPE_FP32 (1u << 0) /* float */
#define ROPECHECK_DTYPE_BF16 (1u << 1) /* uint16_t bf16 bit patterns (the top half of a float) */
/* uint16_t IEEE binary16 bit patterns: round to nearest even on narrowing, subnormals kept (not
 * flushed to zero); added within ABI 1 in the first reserved pointer (apply_fp16 below). */
#define ROPECHECK_DTYPE_FP16 (1u << 2)
/* Which storage the plugin is judged as: fp32 when dtypes has FP32 (the properties' fp32 tensors
 * go to apply_f32), else bf16 when it has BF16, else fp16. A bf16- or fp16-only plugin gets the
 * properties' tensors rounded to its storage (round to nearest even), rotated through its
 * apply_bf16 / apply_fp16, and widened back, and is held to the bound with that storage's
 * rounding term. */

/* What the kernel supports. The host zero-fills it, sets struct_size, and calls
 * query_capabilities once per worker start; cases outside it are never generated. */
typedef struct ropecheck_plugin_capabilities {
  uint32_t struct_size;      /* set by the host: sizeof the host's struct */
  uint32_t layouts;          /* bit mask of (1u << ROPECHECK_LAYOUT_*), at least one */
  uint32_t dtypes;           /* bit mask of ROPECHECK_DTYPE_*, at least one (storage: above) */
  uint32_t angle_precisions; /* bit mask of (1u << ROPECHECK_ANGLES_*), at least one */
  int32_t max_head_dim;      /* largest head_dim handled; 0: no limit (head_dim is even, >= 2) */
  int32_t partial_rotary;    /* nonzero: rotary_dim < head_dim handled (tail passes through) */
  uint32_t reserved[10];     /* zero */
} ropecheck_plugin_capabilities;

/* One RoPE problem's parameters (validated by the host before every call). */
typedef struct ropecheck_plugin_spec {
  uint32_t struct_size;    /* sizeof the host's struct */
  int32_t head_dim;        /* even, >= 2, <= max_head_dim */
  int32_t rotary_dim;      /* even, 2 <= rotary_dim <= head_dim; == head_dim without partial */
  int32_t layout;          /* ROPECHECK_LAYOUT_*, one the capabilities declare */
  int32_t angle_precision; /* ROPECHECK_ANGLES_*: the formation the host judges this call by */
  int32_t scaling_kind;    /* reserved for frequency scaling (linear, NTK, YaRN): 0 (none) */
  double base;             /* theta base, finite, > 1 (10000 in Llama 2) */
  double scaling[4];       /* reserved scaling parameters: 0 */
} ropecheck_plugin_spec;

/* Rotates q and k in place. q is [tokens][q_heads][head_dim], k is [tokens][k_heads][head_dim],
 * contiguous, row-major; k_heads may differ from q_heads (grouped-query attention) and may be 0
 * (q alone: k then points at an empty buffer and must not be touched). positions has one int64
 * per token (any order, gaps, repeats, negatives; |m| <= 2^24) and is read-only. tokens >= 1,
 * q_heads >= 1. Writing one byte outside q or k, or into positions, is detected and FAILS.
 * Returns ROPECHECK_PLUGIN_OK, _UNSUPPORTED or _ERROR. */
typedef int32_t (*ropecheck_plugin_apply_f32_fn)(const ropecheck_plugin_spec* spec, float* q,
                                                 int64_t q_heads, float* k, int64_t k_heads,
                                                 const int64_t* positions, int64_t tokens);
/* The same on bf16 storage (uint16_t bit patterns, round to nearest even on narrowing). */
typedef int32_t (*ropecheck_plugin_apply_bf16_fn)(const ropecheck_plugin_spec* spec, uint16_t* q,
                                                  int64_t q_heads, uint16_t* k, int64_t k_heads,
                                                  const int64_t* positions, int64_t tokens);
/* The same on fp16 storage (uint16_t IEEE binary16 bit patterns, round to nearest even on
 * narrowing, subnormals kept). */
typedef int32_t (*ropecheck_plugin_apply_fp16_fn)(const ropecheck_plugin_spec* spec, uint16_t* q,
                                                  int64_t q_heads, uint16_t* k, int64_t k_heads,
                                                  const int64_t* positions, int64_t tokens);

/* What ropecheck_plugin_entry returns. */
typedef struct ropecheck_plugin_v1 {
  uint32_t abi_version; /* ROPECHECK_PLUGIN_ABI_VERSION: first in every version */
  uint32_t struct_size; /* sizeof(ropecheck_plugin_v1) */
  /* [a-z0-9_.-]+, at most 64 bytes: the implementation id is "plugin/<name>". */
  const char* name;
  const char* summary; /* one line for `ropecheck list` (which RoPE form, where from); may be NULL */
  /* Fills caps (see ropecheck_plugin_capabilities); returns ROPECHECK_PLUGIN_OK. */
  int32_t (*query_capabilities)(ropecheck_plugin_capabilities* caps);
  ropecheck_plugin_apply_f32_fn apply_f32;   /* required when dtypes has FP32, else NULL */
  ropecheck_plugin_apply_bf16_fn apply_bf16; /* required when dtypes has BF16, else NULL */
  /* Required when dtypes has FP16, else NULL. It took the place of reserved[0] (once four), so
   * the struct's size and the offsets of every earlier field are unchanged: a library built
   * against the older header has NULL (reserved) here and loads as before. Its source, if it
   * wrote the reserved pointers positionally as {0, 0, 0, 0}, now writes 0, {0, 0, 0}. */
  ropecheck_plugin_apply_fp16_fn apply_fp16;
  void* reserved[3]; /* NULL */
} ropecheck_plugin_v1;

typedef const ropecheck_plugin_v1* (*ropecheck_plugin_entry_fn)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ROPECHECK_PLUGIN_H_ */
