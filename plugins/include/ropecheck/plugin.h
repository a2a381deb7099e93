/* The ropecheck plugin ABI: how an outside RoPE kernel (a shared library, any language with a C
 * ABI) is verified exactly like a built-in implementation. Six versions, all loaded:
 *   ABI 6 (ropecheck_plugin_v6, v5's layout): ABI 5 plus an optional `forms` entry (below): RoPE
 *         in the engines' own call forms, with the per-head QK-norm fused before it (Qwen3,
 *         Gemma 3, GLM-4): q and k as strided views into one buffer (packed qkv, MLA's rope
 *         part), k optional, angles from the spec or from a cos/sin cache indexed by position,
 *         fp32, bf16 or fp16 storage. NULL: no forms, as before. Write form kernels against it
 *         (plugins/examples/rope_form.c).
 *   ABI 5 (ropecheck_plugin_v5, v4's layout): ABI 4 plus an optional fused entry,
 *         apply_rope_cache (below): RoPE fused with the paged KV-cache write, as inference
 *         engines ship it (vLLM's reshape_and_cache_flash and concat_and_cache_mla, FlashInfer's
 *         append_paged_kv_cache): q rotated in place, k rotated and written with v into a paged
 *         cache (NHD, HND or MLA; fp32, bf16, fp16 or FP8 with a scale). NULL: RoPE only, as
 *         before. Write fused kernels against it (plugins/examples/fused_cache_rope.c).
 *   ABI 4 (ropecheck_plugin_v4, v2's layout): ABI 3 plus an optional backward entry,
 *         apply_backward (below): RoPE's gradient, judged by the backward properties. NULL: the
 *         forward only, as before. Write training kernels against it
 *         (plugins/examples/backward_rope.c).
 *   ABI 3 (ropecheck_plugin_v2's struct with abi_version ROPECHECK_PLUGIN_ABI_V3): ABI 2 plus
 *         multi-axis RoPE (MRoPE, interleaved MRoPE, 2D vision RoPE; below): the capabilities
 *         declare the axis modes, the spec carries the mode and its sections, and positions
 *         hold one position per axis per token. Write multi-axis plugins against it.
 *   ABI 2 (ropecheck_plugin_v2, below ABI 1 in this file): everything a production kernel
 *         takes: frequency scaling with all its parameters and the attention factor, the thread
 *         count of the call, an optional init/teardown with a context, one apply for every
 *         storage type. Write new plugins against it (plugins/examples/scaled_rope.c).
 *   ABI 1 (ropecheck_plugin_v1): unscaled RoPE only; libraries built against it keep loading
 *         unchanged, and their sources keep compiling against this header.
 *
 *   cc -std=c99 -shared -fPIC -o my_rope.so my_rope.c -lm
 *   ropecheck list --plugin ./my_rope.so          # what ropecheck read from it
 *   ropecheck verify --plugin ./my_rope.so        # every property, oracle agreement included
 *
 * Plain C99, explicit-width types only, no ropecheck C++ code to link: include this header and
 * export ONE function,
 *
 *   ROPECHECK_PLUGIN_EXPORT const ropecheck_plugin_v2* ropecheck_plugin_entry(void);
 *
 * (const ropecheck_plugin_v1* for ABI 1) returning a pointer to a struct that lives as long as
 * the library (a static const). ropecheck never runs the library in its own process: a child process dlopen()s
 * it, calls the functions below on buffers in shared memory fenced by guard bytes, and is killed
 * and restarted when it crashes, hangs or writes outside its buffers; each of those is a FAILED
 * property with the shrunk counterexample. plugins/examples/good_rope.c is a complete ABI 1
 * plugin (fp16_rope.c one on fp16 storage), scaled_rope.c a complete ABI 2 one, mrope_rope.c a
 * complete ABI 3 one, backward_rope.c a complete ABI 4 one, fused_cache_rope.c a complete ABI 5
 * one, rope_form.c a complete ABI 6 one.
 *
 * The rotation (ropecheck's README, "What is checked"): for token t at position m = positions[t],
 * rotary pair i of every head is rotated by the angle m * theta_i, theta_i = base^(-2i/rotary_dim),
 *   interleaved: pair i = features (2i, 2i+1)               [x0 y0 x1 y1 ... | tail]
 *   half_split:  pair i = features (i, i + rotary_dim/2)    [x0 x1 ... y0 y1 ... | tail]
 *   (x, y) -> (x cos - y sin, x sin + y cos); features [rotary_dim, head_dim) pass through.
 *
 * Frequency scaling (ABI 2; derivations in ropecheck's core/scaling.h): with d = rotary_dim,
 * t_i = 2i/d, theta_i = base^-t_i, L = original_max_position and L' = sequence_length,
 *   linear       theta_i / factor
 *   ntk          base' = base * factor^(d/(d-2)), theta_i = base'^-t_i
 *   dynamic_ntk  as ntk with factor' = factor * L'/L - (factor - 1), but only when L' > L
 *   yarn         theta_i / factor * r_i + theta_i * (1 - r_i), the ramp r_i = clamp((i - lo) /
 *                (hi - lo), 0, 1) (hi - lo = 0.001 when they are equal), lo = max(0, floor(c(
 *                beta_fast))), hi = min(d - 1, ceil(c(beta_slow))) (no floor/ceil when
 *                yarn_truncate is 0), c(b) = d ln(L / (2 pi b)) / (2 ln base)
 *   llama3       with the wavelength w_i = 2 pi / theta_i: theta_i when w_i < L / high_freq_factor,
 *                theta_i / factor when w_i > L / low_freq_factor, else (1 - a) theta_i / factor
 *                + a theta_i, a = (L / w_i - low_freq_factor) / (high_freq_factor - low_freq_factor)
 *   longrope     theta_i / long_factor[i] when L' > L, else theta_i / short_factor[i]
 * and cos and sin multiplied by spec->attention_factor (1 but for yarn, longrope or an explicit
 * override: the host resolves it, a kernel multiplies and never recomputes it).
 *
 * Multi-axis RoPE (ABI 3; ropecheck's core/position_axes.h): a token has A = 1, 3 or 2 positions
 * (axis_mode NONE, MROPE or IMROPE, VISION), stored token-major: positions[t * A + a]. With
 * sections s = spec->sections (pairs per axis, adding up to rotary_dim/2), pair i rotates by the
 * position of its axis:
 *   MROPE   Qwen2-VL: pairs [0, s0) axis t, the next s1 axis h, the last s2 axis w
 *   IMROPE  Qwen3-VL: axis h when i mod 3 = 1 and i < 3 s1, w when i mod 3 = 2 and i < 3 s2, else t
 *   VISION  Qwen2-VL's vision tower: axes row, column; pairs [0, s0) the row, the rest (s1 of
 *           them) the column, s2 = 0; each section restarts the frequencies: its j-th pair has
 *           theta_j = base^(-2j / (rotary_dim/2)); never scaled; rotary_dim a multiple of 4
 * theta_i otherwise as above (frequency scaling composes with MROPE and IMROPE).
 *
 * The backward pass (ABI 4; ropecheck's core/spec.h, Pass): apply_backward gets the gradient of
 * the loss with respect to the rotated q and k (dy) in call->q and call->k and replaces it with
 * the gradient with respect to the unrotated ones, dx = a R(m)^T dy: the same rotation with the
 * sine's sign flipped, (x, y) -> (x cos + y sin, -x sin + y cos), cos and sin times the same
 * attention factor a (it multiplies the gradient too), every scaling and axis mode as in the
 * forward; the tail's gradient passes through unchanged. The call, spec, storage and threads
 * are the forward's.
 *
 * Versioning: abi_version is the first field of every version of the entry struct, struct_size
 * the second; the host reads those two, refuses a version it does not speak, and never reads
 * past struct_size. Structs the HOST fills (spec, capabilities, call, init) carry their own
 * struct_size so that a plugin built against an older header can tell which fields exist.
 * Reserved fields are zero; a plugin must not rely on them.
 */
#ifndef ROPECHECK_PLUGIN_H_
#define ROPECHECK_PLUGIN_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ROPECHECK_PLUGIN_ABI_V1 1u
#define ROPECHECK_PLUGIN_ABI_V2 2u
#define ROPECHECK_PLUGIN_ABI_V3 3u /* ropecheck_plugin_v2's struct, with multi-axis RoPE */
#define ROPECHECK_PLUGIN_ABI_V4 4u /* ABI 3 with the optional backward entry */
#define ROPECHECK_PLUGIN_ABI_V5 5u /* ABI 4 with the optional fused RoPE + KV-cache entry */
#define ROPECHECK_PLUGIN_ABI_V6 6u /* ABI 5 with the optional call forms + QK-norm entry */
/* ropecheck_plugin_v1's abi_version. It stays 1: ABI 1 sources write it into their
 * ropecheck_plugin_v1, and must keep building ABI 1 libraries. */
#define ROPECHECK_PLUGIN_ABI_VERSION ROPECHECK_PLUGIN_ABI_V1
#define ROPECHECK_PLUGIN_ENTRY_SYMBOL "ropecheck_plugin_entry"

#if defined(_WIN32)
#define ROPECHECK_PLUGIN_EXPORT __declspec(dllexport)
#else
#define ROPECHECK_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* Status codes of apply_* (and of ABI 2's init and query_capabilities). */
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
 * cost; fp32 recurrence (theta = float(m), then theta *= theta_scale pair by pair in fp32 with
 * theta_scale = powf(base, -2/rotary_dim): ggml's rope cache, cached-theta kernels) gets an
 * error that also grows with the pair index i, about 1.6 i |m theta_i| eps32 (docs/tolerance.md).
 * Declare only what the kernel really does: declaring fp64 for fp32 angles, or fp32 for a
 * recurrence, fails oracle_agreement at large positions, by design. Values of
 * ropecheck_plugin_spec.angle_precision; bits (1u << value) in capabilities.angle_precisions. */
#define ROPECHECK_ANGLES_FP32 0
#define ROPECHECK_ANGLES_FP64 1
#define ROPECHECK_ANGLES_FP32_RECURRENCE 2 /* added within ABI 1: a new bit, old plugins unchanged */

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

/* Frequency scaling kinds (ABI 2; the formulas are at the top of this file): values of
 * ropecheck_plugin_spec.scaling_kind; bits (1u << value) in capabilities.scaling_kinds. */
#define ROPECHECK_SCALING_NONE 0
#define ROPECHECK_SCALING_LINEAR 1      /* position interpolation */
#define ROPECHECK_SCALING_NTK 2         /* NTK-aware, static */
#define ROPECHECK_SCALING_DYNAMIC_NTK 3 /* HF "dynamic" */
#define ROPECHECK_SCALING_YARN 4
#define ROPECHECK_SCALING_LLAMA3 5
#define ROPECHECK_SCALING_LONGROPE 6    /* Phi-3's su/longrope */

/* Position axes (ABI 3; formulas at the top of this file): values of ropecheck_plugin_spec.
 * axis_mode; bits (1u << value) in capabilities.axis_modes. */
#define ROPECHECK_AXES_NONE 0   /* one position per token */
#define ROPECHECK_AXES_MROPE 1  /* t, h, w in consecutive sections (Qwen2-VL, Qwen2.5-VL) */
#define ROPECHECK_AXES_IMROPE 2 /* t, h, w interleaved over the pairs (Qwen3-VL) */
#define ROPECHECK_AXES_VISION 3 /* row, column of a patch grid (Qwen2-VL's vision tower) */

/* What the kernel supports. The host zero-fills it, sets struct_size, and calls
 * query_capabilities once per worker start; cases outside it are never generated. */
typedef struct ropecheck_plugin_capabilities {
  uint32_t struct_size;      /* set by the host: sizeof the host's struct */
  uint32_t layouts;          /* bit mask of (1u << ROPECHECK_LAYOUT_*), at least one */
  uint32_t dtypes;           /* bit mask of ROPECHECK_DTYPE_*, at least one (storage: above) */
  uint32_t angle_precisions; /* bit mask of (1u << ROPECHECK_ANGLES_*), at least one */
  int32_t max_head_dim;      /* largest head_dim handled; 0: no limit (head_dim is even, >= 2) */
  int32_t partial_rotary;    /* nonzero: rotary_dim < head_dim handled (tail passes through) */
  /* ABI 2 (ignored for an ABI 1 plugin, which gets unscaled specs only): */
  uint32_t scaling_kinds; /* bits (1u << ROPECHECK_SCALING_*); NONE is implied, 0 = none only */
  /* ABI 3 (zero for ABI 1 and 2, whose tokens have one position): bits (1u << ROPECHECK_AXES_*);
   * NONE is implied, 0 = one axis only. It was reserved0: the struct is unchanged. */
  uint32_t axis_modes;
  int64_t max_position;   /* largest |position| handled; 0: ropecheck's limit, 2^24 */
  uint32_t reserved[6];   /* zero */
} ropecheck_plugin_capabilities;

/* One RoPE problem's parameters (validated by the host before every call). An ABI 1 plugin
 * reads the fields up to `scaling` and always gets scaling_kind 0; ABI 2 fields follow. */
typedef struct ropecheck_plugin_spec {
  uint32_t struct_size;    /* sizeof the host's struct */
  int32_t head_dim;        /* even, >= 2, <= max_head_dim */
  int32_t rotary_dim;      /* even, 2 <= rotary_dim <= head_dim; == head_dim without partial */
  int32_t layout;          /* ROPECHECK_LAYOUT_*, one the capabilities declare */
  int32_t angle_precision; /* ROPECHECK_ANGLES_*: the formation the host judges this call by */
  int32_t scaling_kind;    /* ROPECHECK_SCALING_*, one the capabilities declare (ABI 1: 0) */
  double base;             /* theta base, finite, > 1 (10000 in Llama 2) */
  double scaling[4];       /* reserved: 0 */
  /* ABI 2. Each parameter is set for the kinds named beside it and zero for the others. */
  double factor;                 /* >= 1: every kind but none (longrope: its attention factor) */
  int64_t original_max_position; /* L > 0: dynamic_ntk, yarn, llama3, longrope */
  int64_t sequence_length;       /* L' > 0: dynamic_ntk, longrope (HF: the largest position + 1) */
  double beta_fast;              /* yarn: rotations where the ramp starts (32 in most models) */
  double beta_slow;              /* yarn: rotations where it ends (1); beta_fast > beta_slow */
  int32_t yarn_truncate;         /* yarn: 1 floor/ceil the correction dims (HF's default), 0 not */
  int32_t reserved1;             /* zero */
  double low_freq_factor;        /* llama3 (1 in Llama 3.1) */
  double high_freq_factor;       /* llama3 (4); > low_freq_factor */
  const double* short_factor;    /* longrope: rotary_dim/2 entries, all > 0; else NULL */
  const double* long_factor;     /* longrope: rotary_dim/2 entries, all > 0; else NULL */
  double attention_factor;       /* > 0: multiply cos and sin by it (1 for most specs) */
  /* ABI 3 (appended: a plugin built against ABI 2 never reads them, and gets NONE specs only). */
  int32_t axis_mode;   /* ROPECHECK_AXES_*, one the capabilities declare */
  int32_t sections[3]; /* pairs per axis (t, h, w; row, column, 0); all 0 for NONE */
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

/* ------------------------------------------------------------------------------------------- */
/* ABI 2                                                                                        */
/* ------------------------------------------------------------------------------------------- */

/* What init gets (filled by the host; ABI 2). */
typedef struct ropecheck_plugin_init_args {
  uint32_t struct_size;  /* sizeof the host's struct */
  int32_t max_threads;   /* no call will ask for more threads than this (>= 1) */
  /* Where init may write one line saying what it chose at run time (a CPU variant, a backend,
   * a library version: "ggml 0.5.0 CPU backend zen4"), NUL-terminated, at most
   * description_bytes bytes with the NUL; `ropecheck list --plugin` shows it. */
  char* description;
  uint32_t description_bytes;
  uint32_t reserved0;    /* zero */
  void* reserved[4];     /* NULL */
} ropecheck_plugin_init_args;

/* One apply (filled by the host; ABI 2). q is [tokens][q_heads][head_dim] and k is
 * [tokens][k_heads][head_dim], contiguous, row-major, elements of `dtype`: float for
 * ROPECHECK_DTYPE_FP32, uint16_t bit patterns for BF16 and FP16 (round to nearest even on
 * narrowing; fp16 keeps subnormals). Rotate both in place. k_heads may differ from q_heads (GQA)
 * and may be 0 (q alone: k then points at an empty buffer and must not be touched). positions
 * has one int64 per token (any order, gaps, repeats, negatives; |m| <= max_position) and, like
 * spec and its factor arrays, is read-only. tokens >= 1, q_heads >= 1. Writing one byte outside
 * q or k, or into what is read-only, is detected and FAILS. */
typedef struct ropecheck_plugin_call {
  uint32_t struct_size;                /* sizeof the host's struct */
  uint32_t dtype;                      /* one ROPECHECK_DTYPE_* the capabilities declare */
  const ropecheck_plugin_spec* spec;
  void* q;
  int64_t q_heads;
  void* k;
  int64_t k_heads;
  const int64_t* positions;
  int64_t tokens;
  int32_t threads;                     /* use at most this many threads (1: this one only) */
  /* ABI 3: positions per token (1, 3 or 2 as spec->axis_mode says), so positions holds
   * tokens * axes entries, token-major. Zero for ABI 2 plugins (then one per token). It was
   * reserved0: the struct is unchanged. */
  int32_t axes;
  void* reserved[4];                   /* NULL */
} ropecheck_plugin_call;

/* What ropecheck_plugin_entry returns in ABI 2. The worker process calls init (when not NULL)
 * once, before anything else, then query_capabilities once, then apply for every call, and
 * teardown (when not NULL) once when the host is done with it (not after a crash or a kill).
 * `context` is whatever init stored in *context (NULL without init). */
typedef struct ropecheck_plugin_v2 {
  uint32_t abi_version; /* ROPECHECK_PLUGIN_ABI_V2 */
  uint32_t struct_size; /* sizeof(ropecheck_plugin_v2) */
  const char* name;     /* [A-Za-z0-9_.-]+, at most 64 bytes: the id is "plugin/<name>" */
  const char* summary;  /* one line for `ropecheck list`; may be NULL */
  /* Optional: sets up what the library owns (memory, a backend, a thread pool) and stores it in
   * *context. Returns ROPECHECK_PLUGIN_OK, or _ERROR with a reason in args->description: the
   * plugin is then refused (exit 2) with that reason. */
  int32_t (*init)(const ropecheck_plugin_init_args* args, void** context);
  /* Fills caps (struct_size set, the rest zero on entry); returns ROPECHECK_PLUGIN_OK. */
  int32_t (*query_capabilities)(void* context, ropecheck_plugin_capabilities* caps);
  /* Rotates call->q and call->k; returns ROPECHECK_PLUGIN_OK, _UNSUPPORTED or _ERROR. */
  int32_t (*apply)(void* context, const ropecheck_plugin_call* call);
  void (*teardown)(void* context); /* optional: frees what init set up */
  void* reserved[4];               /* NULL */
} ropecheck_plugin_v2;

/* ------------------------------------------------------------------------------------------- */
/* ABI 4                                                                                        */
/* ------------------------------------------------------------------------------------------- */

/* What ropecheck_plugin_entry returns in ABI 4: ropecheck_plugin_v2's fields, in the same places,
 * with the backward entry where v2 has its first reserved pointer (a struct of its own, so that
 * ABI 2 and 3 sources keep compiling unchanged). The entry function returns a pointer to it. */
typedef struct ropecheck_plugin_v4 {
  uint32_t abi_version; /* ROPECHECK_PLUGIN_ABI_V4 */
  uint32_t struct_size; /* sizeof(ropecheck_plugin_v4) */
  const char* name;     /* as in ropecheck_plugin_v2 */
  const char* summary;
  int32_t (*init)(const ropecheck_plugin_init_args* args, void** context);
  int32_t (*query_capabilities)(void* context, ropecheck_plugin_capabilities* caps);
  int32_t (*apply)(void* context, const ropecheck_plugin_call* call);
  void (*teardown)(void* context);
  /* Optional: the backward pass (above) on the same call, dy in and dx out in call->q and
   * call->k. NULL: the forward only (the backward properties skip). */
  int32_t (*apply_backward)(void* context, const ropecheck_plugin_call* call);
  void* reserved[3]; /* NULL */
} ropecheck_plugin_v4;

/* ------------------------------------------------------------------------------------------- */
/* ABI 5: RoPE fused with the paged KV-cache write                                              */
/* ------------------------------------------------------------------------------------------- */

/* The fused call (ropecheck's core/kv_cache.h). For every token t (0 <= t < tokens):
 *   - q[t] is rotated in place, as apply rotates it (the spec, positions, axes: above);
 *   - k[t] is rotated (into the cache only: k itself is read-only) and written, with v[t] as it
 *     came, into the cache at the token's slot s = slots[t]:
 *       block = s / block_size, offset = s % block_size.
 *   Layouts (cache element index of kv head h, feature f; F features a row):
 *     NHD [blocks][block_size][kv_heads][head_dim]  ((block * block_size + offset) * kv_heads
 *                                                   + h) * head_dim + f    (vLLM's flash layout)
 *     HND [blocks][kv_heads][block_size][head_dim]  ((block * kv_heads + h) * block_size
 *                                                   + offset) * head_dim + f    (FlashInfer's HND)
 *     MLA [blocks][block_size][latent_dim + head_dim]  (block * block_size + offset) * F + f,
 *         F = latent_dim + head_dim, one cache (v_cache is NULL), kv_heads 1: the row is
 *         [ kv_c (v[t], latent_dim features, not rotated) | k_pe (k[t] rotated, head_dim) ],
 *         as vLLM's concat_and_cache_mla and FlashInfer's MLA append lay it out.
 *   Storage of a cache element (uint16_t, uint8_t bit patterns for the narrow ones, little
 *   endian as the host's): fp32 as is; bf16 and fp16 rounded to nearest even (fp16 keeps
 *   subnormals); FP8 (OCP e4m3fn and e5m2, as PyTorch's float8_e4m3fn / float8_e5m2):
 *     stored = x * scale (ROPECHECK_SCALE_MULTIPLY: FlashInfer, TensorRT-LLM) or
 *     stored = x / scale (ROPECHECK_SCALE_DIVIDE: vLLM), formed in fp32, then narrowed
 *     round to nearest even WITH SATURATION: what rounds past the largest finite value (448 for
 *     e4m3, 57344 for e5m2), Inf included, becomes it, with its sign; a NaN stays a NaN (e4m3's
 *     only NaN is S.1111.111, e5m2's are IEEE's). No finite x ever becomes Inf or NaN: a plain
 *     non-saturating cast (eager torch .to(float8_e4m3fn)) turns 449 into NaN and FAILS.
 *     k uses k_scale, v uses v_scale; MLA's whole row (kv_c and k_pe) uses k_scale. A scale
 *     array holds 1 entry (per tensor) or kv_heads (per head: head h uses scale[h]).
 *   Padding: a slot < 0 (-1 in the engines) is a padding token. It addresses nothing: it is
 *     never an index (slot -1 taken as an index writes the cache's last slot and FAILS). Under
 *     ROPECHECK_PADDING_SKIP_TOKEN the token is skipped whole (its q left as it came); under
 *     ROPECHECK_PADDING_ROTATE_Q_ONLY its q is rotated and only its cache write skipped. A kernel
 *     declares the one it does (capabilities below) and gets only calls under it.
 *   What must not be touched: every cache byte not addressed by a valid slot (the whole cache
 *   is compared bit for bit after the call), a padding token's q under SKIP_TOKEN, and what is
 *   read-only: k, v, positions, slots, the scales, spec and cache. Writing one byte outside q,
 *   k_cache or v_cache, or into what is read-only, is detected and FAILS. Valid slots are
 *   distinct and < blocks * block_size; they come in any order, cross blocks, repeat blocks,
 *   leave gaps; block_size is any positive value (the engines': 16, 32, 64, 128). */

/* Cache layouts: values of ropecheck_plugin_cache.layout; bits (1u << value) in
 * ropecheck_plugin_cache_capabilities.layouts. */
#define ROPECHECK_CACHE_NHD 0
#define ROPECHECK_CACHE_HND 1
#define ROPECHECK_CACHE_MLA 2
/* Cache storages: values of ropecheck_plugin_cache.storage; bits (1u << value) in .storages. */
#define ROPECHECK_CACHE_FP32 0
#define ROPECHECK_CACHE_BF16 1
#define ROPECHECK_CACHE_FP16 2
#define ROPECHECK_CACHE_FP8_E4M3 3
#define ROPECHECK_CACHE_FP8_E5M2 4
/* FP8 scale directions: values of ropecheck_plugin_cache.scale_direction; bits (1u << value) in
 * .scale_directions. */
#define ROPECHECK_SCALE_MULTIPLY 0 /* stored = x * scale */
#define ROPECHECK_SCALE_DIVIDE 1   /* stored = x / scale */
/* Padding rules: values of ropecheck_plugin_cache.padding and of .padding in the capabilities. */
#define ROPECHECK_PADDING_SKIP_TOKEN 0    /* nothing at all: q left as it came, no cache write */
#define ROPECHECK_PADDING_ROTATE_Q_ONLY 1 /* q rotated, the cache write skipped */

/* What the fused entry supports. The host zero-fills it, sets struct_size, and calls
 * query_rope_cache_capabilities once per worker start; calls outside it are never made. The
 * rotation itself is bounded by ropecheck_plugin_capabilities (layouts, angle precisions,
 * scaling kinds, axis modes, max_head_dim, max_position) as apply is. */
typedef struct ropecheck_plugin_cache_capabilities {
  uint32_t struct_size;      /* set by the host: sizeof the host's struct */
  uint32_t layouts;          /* bits (1u << ROPECHECK_CACHE_NHD / _HND / _MLA), at least one */
  uint32_t storages;         /* bits (1u << ROPECHECK_CACHE_FP32 ... _FP8_E5M2), at least one */
  uint32_t scale_directions; /* bits (1u << ROPECHECK_SCALE_*); at least one with an FP8 storage */
  int32_t padding;           /* ROPECHECK_PADDING_*: what the kernel does with a padding token */
  uint32_t reserved[7];      /* zero */
} ropecheck_plugin_cache_capabilities;

/* The paged cache of one fused call (filled by the host, read-only). */
typedef struct ropecheck_plugin_cache {
  uint32_t struct_size;    /* sizeof the host's struct */
  int32_t layout;          /* ROPECHECK_CACHE_NHD / _HND / _MLA, one the capabilities declare */
  int32_t storage;         /* ROPECHECK_CACHE_FP32 ... _FP8_E5M2, one declared */
  int32_t scale_direction; /* FP8: ROPECHECK_SCALE_*, one declared; else 0 (no scale) */
  int32_t padding;         /* ROPECHECK_PADDING_*: the rule declared */
  int32_t reserved0;       /* zero */
  int64_t blocks;          /* >= 1 */
  int64_t block_size;      /* slots per block, >= 1 */
  int64_t kv_heads;        /* k's and v's heads, >= 1; MLA: 1 */
  int64_t head_dim;        /* k's and v's features, = spec->head_dim; MLA: k_pe's */
  int64_t latent_dim;      /* MLA: kv_c's features, >= 1; else 0 */
  /* FP8 only (else NULL and 0): k_scale_count is 1 or kv_heads, every scale finite and > 0.
   * v_scale for NHD and HND; MLA has none (NULL, 0): its row uses k_scale. */
  const float* k_scale;
  int64_t k_scale_count;
  const float* v_scale;
  int64_t v_scale_count;
  void* reserved[4]; /* NULL */
} ropecheck_plugin_cache;

/* One fused call (filled by the host). q, k and v are fp32, contiguous, row-major:
 * q [tokens][q_heads][head_dim] (rotated in place), k and v [tokens][kv_heads][head_dim]
 * (read-only); MLA: k is k_pe [tokens][1][head_dim], v is kv_c [tokens][1][latent_dim].
 * positions has `axes` int64 per token, token-major (as ropecheck_plugin_call's; a padding token
 * has a valid one too), slots one int64 per token (< 0: padding). k_cache and v_cache hold
 * blocks * block_size * kv_heads * F elements of the cache's storage each (F = head_dim; MLA:
 * latent_dim + head_dim, and v_cache is NULL). tokens >= 0, q_heads >= 1. */
typedef struct ropecheck_plugin_cache_call {
  uint32_t struct_size; /* sizeof the host's struct */
  int32_t threads;      /* use at most this many threads (1: this one only) */
  const ropecheck_plugin_spec* spec;
  const ropecheck_plugin_cache* cache;
  float* q;
  int64_t q_heads;
  const float* k;
  const float* v;
  const int64_t* positions;
  int32_t axes; /* positions per token: 1, 3 or 2 as spec->axis_mode says */
  int32_t reserved0; /* zero */
  const int64_t* slots;
  int64_t tokens;
  void* k_cache;
  void* v_cache;
  void* reserved[4]; /* NULL */
} ropecheck_plugin_cache_call;

/* What ropecheck_plugin_entry returns in ABI 5: ropecheck_plugin_v4's fields in the same places,
 * with the fused entry and its capabilities where v4 has its first two reserved pointers. A
 * plugin with apply_rope_cache is, beside its RoPE implementation plugin/<name>, a fused
 * implementation plugin/<name> of its own (`ropecheck list --plugin` shows both). */
typedef struct ropecheck_plugin_v5 {
  uint32_t abi_version; /* ROPECHECK_PLUGIN_ABI_V5 */
  uint32_t struct_size; /* sizeof(ropecheck_plugin_v5) */
  const char* name;     /* as in ropecheck_plugin_v2 */
  const char* summary;
  int32_t (*init)(const ropecheck_plugin_init_args* args, void** context);
  int32_t (*query_capabilities)(void* context, ropecheck_plugin_capabilities* caps);
  int32_t (*apply)(void* context, const ropecheck_plugin_call* call); /* required, as in v2 */
  void (*teardown)(void* context);
  int32_t (*apply_backward)(void* context, const ropecheck_plugin_call* call); /* optional (v4) */
  /* Optional: the fused call (above). Returns ROPECHECK_PLUGIN_OK, _UNSUPPORTED or _ERROR. NULL:
   * RoPE only. With it, query_rope_cache_capabilities is required. */
  int32_t (*apply_rope_cache)(void* context, const ropecheck_plugin_cache_call* call);
  /* Fills caps (struct_size set, the rest zero on entry); returns ROPECHECK_PLUGIN_OK. */
  int32_t (*query_rope_cache_capabilities)(void* context, ropecheck_plugin_cache_capabilities* caps);
  void* reserved[1]; /* NULL */
} ropecheck_plugin_v5;

/* ------------------------------------------------------------------------------------------- */
/* ABI 6: RoPE in the engines' call forms, QK-norm fused before it                              */
/* ------------------------------------------------------------------------------------------- */

/* The form call (ropecheck's core/rope_form.h). One buffer of `elements` elements of `dtype`
 * (float for ROPECHECK_DTYPE_FP32; uint16_t bf16 or IEEE binary16 bit patterns for _BF16 and
 * _FP16, round to nearest even on narrowing, fp16 keeping subnormals) holds q, k and whatever
 * lies around them: v, MLA's nope parts, gaps. Everything below counts ELEMENTS, never bytes.
 *   Views: q (always) and k (NULL when the call has none: q alone) are strided views of heads;
 *   head h of token t starts at element
 *       offset + t * token_stride + h * head_stride
 *   and holds spec->head_dim consecutive features (MLA: head_dim is the rope part's width, q_pe
 *   at offset nope_dim of each [nope | rope] head). A flat view has head_stride = head_dim and
 *   token_stride = heads * head_dim (q [tokens][q_heads][head_dim] alone in the buffer); a packed
 *   qkv [tokens][(q_heads + 2 k_heads) * head_dim] has q at offset 0 and k at offset q_heads *
 *   head_dim, both with token stride (q_heads + 2 k_heads) * head_dim; k's head stride may
 *   differ from q's. The host guarantees: heads of a view do not overlap one another, tokens do
 *   not overlap, q's rows and k's rows share no element, and every row lies in the buffer.
 *   What a call does, token by token (positions[t] = m), head by head of q, then of k:
 *     1. QK-norm (when norm is not NULL), over ALL head_dim features of the head x:
 *          r = 1 / sqrt(sum_f(x_f^2) / head_dim + eps)          (eps INSIDE the root)
 *          x_hat_f = x_f * r * w'_f,  w'_f = w_f (ROPECHECK_NORM_WEIGHT_PLAIN, Qwen3, GLM-4) or
 *                                     1 + w_f (ROPECHECK_NORM_WEIGHT_ONE_PLUS, Gemma's)
 *        w is norm->q_weight for q's heads, norm->k_weight for k's (head_dim entries each).
 *        Precision: ROPECHECK_NORM_FP32 keeps x_hat in fp32 into the rotation (what fused
 *        kernels do: no rounding to the storage in between); ROPECHECK_NORM_STORAGE rounds x_f r
 *        to the storage type, then the product with w' again (an unfused norm then RoPE in the
 *        model's dtype). Both are the same on fp32 storage.
 *     2. The rotation of the spec's first rotary_dim features of x_hat (x without a norm), as
 *        apply rotates them (the layouts and scaling at the top of this file); features
 *        [rotary_dim, head_dim) are stored normalized, not rotated (as they came without a norm).
 *     3. The result rounded once to the storage and written back in place.
 *   Angles: ROPECHECK_ANGLE_SOURCE_SPEC: from the spec, as apply forms them (every scaling, the
 *     attention factor). ROPECHECK_ANGLE_SOURCE_COS_SIN_CACHE: from cos_sin_cache, fp32,
 *     [cache_rows][rotary_dim], row-major: row m holds cos(m theta_i) a for pair i in
 *     [0, rotary_dim/2), then sin(m theta_i) a at [rotary_dim/2 + i] (vLLM's cos_sin_cache,
 *     FlashInfer's apply_rope_with_cos_sin_cache); a (the attention factor) is already in it: do
 *     not multiply again. Token t uses row positions[t], 0 <= positions[t] < cache_rows; only
 *     forward specs come with a cache. The spec still says the layout, head_dim and rotary_dim.
 *   What must not be touched: every element of the buffer outside q's and k's rows (the whole
 *   buffer is compared after the call), and what is read-only: positions, cos_sin_cache, the
 *   norm weights, spec and its factor arrays, the views and the norm. Writing one byte outside
 *   the buffer, or into what is read-only, is detected and FAILS. */

/* Angle sources: values of ropecheck_plugin_form_call.angle_source; bits (1u << value) in
 * ropecheck_plugin_form_capabilities.angle_sources. */
#define ROPECHECK_ANGLE_SOURCE_SPEC 0
#define ROPECHECK_ANGLE_SOURCE_COS_SIN_CACHE 1
/* QK-norm weight conventions: values of ropecheck_plugin_qk_norm.weight; bits (1u << value) in
 * .norm_weights. */
#define ROPECHECK_NORM_WEIGHT_PLAIN 0    /* w (Qwen3, GLM-4) */
#define ROPECHECK_NORM_WEIGHT_ONE_PLUS 1 /* 1 + w (Gemma) */
/* QK-norm precision: values of ropecheck_plugin_qk_norm.precision and of .norm_precision. */
#define ROPECHECK_NORM_FP32 0    /* x_hat kept in fp32 into the rotation */
#define ROPECHECK_NORM_STORAGE 1 /* x r, then x r w', rounded to the storage type */

/* What the form entry supports. The host zero-fills it, sets struct_size, and calls
 * query_form_capabilities once per worker start; calls outside it are never made. The rotation
 * itself is bounded by ropecheck_plugin_capabilities (layouts, angle precisions, scaling kinds,
 * partial_rotary, max_head_dim, max_position) as apply is; one position axis only. */
typedef struct ropecheck_plugin_form_capabilities {
  uint32_t struct_size;    /* set by the host: sizeof the host's struct */
  uint32_t dtypes;         /* bit mask of ROPECHECK_DTYPE_*: the buffer's storages, at least one */
  uint32_t angle_sources;  /* bits (1u << ROPECHECK_ANGLE_SOURCE_*), at least one */
  int32_t strided;         /* nonzero: any views; 0: flat q and k only (see above) */
  int32_t k_optional;      /* nonzero: calls without k (k NULL) */
  int32_t plain_calls;     /* nonzero: calls without a norm (norm NULL) */
  uint32_t norm_weights;   /* bits (1u << ROPECHECK_NORM_WEIGHT_*); 0: no QK-norm. At least one
                            * of plain_calls and norm_weights. */
  int32_t norm_precision;  /* ROPECHECK_NORM_FP32 or _STORAGE: the one the norm computes */
  uint32_t reserved[8];    /* zero */
} ropecheck_plugin_form_capabilities;

/* A strided view of heads in the buffer, in elements (above). */
typedef struct ropecheck_plugin_head_view {
  int64_t heads;        /* >= 1 */
  int64_t offset;       /* >= 0: where token 0's head 0 starts */
  int64_t token_stride; /* >= 0: from a token's head h to the next token's head h */
  int64_t head_stride;  /* >= 0: from head h to head h + 1 of a token */
} ropecheck_plugin_head_view;

/* The QK-norm of a call (filled by the host, read-only). */
typedef struct ropecheck_plugin_qk_norm {
  uint32_t struct_size;   /* sizeof the host's struct */
  int32_t weight;         /* ROPECHECK_NORM_WEIGHT_*, one the capabilities declare */
  int32_t precision;      /* ROPECHECK_NORM_*: the one declared */
  int32_t reserved0;      /* zero */
  double eps;             /* finite, > 0 (1e-6 in Qwen3 and Gemma 3, 1e-5 in GLM-4) */
  const float* q_weight;  /* head_dim finite entries */
  const float* k_weight;  /* head_dim finite entries; NULL when the call has no k */
  void* reserved[2];      /* NULL */
} ropecheck_plugin_qk_norm;

/* One form call (filled by the host). tokens >= 1. */
typedef struct ropecheck_plugin_form_call {
  uint32_t struct_size;                /* sizeof the host's struct */
  uint32_t dtype;                      /* one ROPECHECK_DTYPE_* the form capabilities declare */
  const ropecheck_plugin_spec* spec;   /* axis_mode NONE; forward only with a cos/sin cache */
  void* buffer;                        /* `elements` elements of dtype, rewritten in place */
  int64_t elements;
  int64_t tokens;
  const ropecheck_plugin_head_view* q;
  const ropecheck_plugin_head_view* k; /* NULL: no k */
  const int64_t* positions;            /* one per token (as apply's; cache rows with a cache) */
  int32_t angle_source;                /* ROPECHECK_ANGLE_SOURCE_*, one declared */
  int32_t threads;                     /* use at most this many threads (1: this one only) */
  const float* cos_sin_cache;          /* [cache_rows][rotary_dim]; NULL with angles from the spec */
  int64_t cache_rows;                  /* >= 1 with a cache; else 0 */
  const ropecheck_plugin_qk_norm* norm; /* NULL: no QK-norm, the rotation alone */
  void* reserved[4];                   /* NULL */
} ropecheck_plugin_form_call;

/* The form entry: a struct of its own, so that it can grow. */
typedef struct ropecheck_plugin_forms {
  uint32_t struct_size; /* sizeof(ropecheck_plugin_forms) */
  uint32_t reserved0;   /* zero */
  /* Fills caps (struct_size set, the rest zero on entry); returns ROPECHECK_PLUGIN_OK. */
  int32_t (*query_form_capabilities)(void* context, ropecheck_plugin_form_capabilities* caps);
  /* The form call (above). Returns ROPECHECK_PLUGIN_OK, _UNSUPPORTED or _ERROR. */
  int32_t (*apply_rope_form)(void* context, const ropecheck_plugin_form_call* call);
  void* reserved[4]; /* NULL */
} ropecheck_plugin_forms;

/* What ropecheck_plugin_entry returns in ABI 6: ropecheck_plugin_v5's fields in the same places,
 * with `forms` where v5 has its last reserved pointer. A plugin with forms is, beside its RoPE
 * implementation plugin/<name> (and its fused cache one, with apply_rope_cache), a form
 * implementation plugin/<name> of its own (`ropecheck list --plugin` shows its capabilities). */
typedef struct ropecheck_plugin_v6 {
  uint32_t abi_version; /* ROPECHECK_PLUGIN_ABI_V6 */
  uint32_t struct_size; /* sizeof(ropecheck_plugin_v6) */
  const char* name;     /* as in ropecheck_plugin_v2 */
  const char* summary;
  int32_t (*init)(const ropecheck_plugin_init_args* args, void** context);
  int32_t (*query_capabilities)(void* context, ropecheck_plugin_capabilities* caps);
  int32_t (*apply)(void* context, const ropecheck_plugin_call* call); /* required, as in v2 */
  void (*teardown)(void* context);
  int32_t (*apply_backward)(void* context, const ropecheck_plugin_call* call); /* optional (v4) */
  int32_t (*apply_rope_cache)(void* context, const ropecheck_plugin_cache_call* call); /* optional (v5) */
  int32_t (*query_rope_cache_capabilities)(void* context, ropecheck_plugin_cache_capabilities* caps);
  /* Optional: the form entry (above), a pointer to a struct that lives as long as the library.
   * NULL: no forms. Both of its functions are required. */
  const ropecheck_plugin_forms* forms;
} ropecheck_plugin_v6;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ROPECHECK_PLUGIN_H_ */
