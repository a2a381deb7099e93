/* rope_form: an ABI 6 plugin in plain C99, RoPE in the engines' own call forms with the per-head
 * QK-norm fused before it (Qwen3, Gemma 3, GLM-4; vLLM's rotary_embedding on a packed qkv with its
 * cos_sin_cache, FlashInfer's apply_rope_with_cos_sin_cache, fused QK-norm + RoPE kernels), the
 * template for porting one. apply_rope_form takes q and k as strided views into one buffer (k
 * optional), angles from the spec or from a cos/sin cache row per position, on fp32, bf16 and fp16
 * storage; with a norm, each head is RMS-normalized over all its head_dim features first
 * (x / sqrt(mean(x^2) + eps) times w, or 1 + w), the result kept in fp32 into the rotation, then
 * rounded once to the storage. Nothing outside the views' rows is touched. apply (ABI 2's call,
 * required) is the same rotation on flat q and k. Every scaling kind (example_scaling.h), both
 * pair layouts, partial rotary; angles and products in double: fp64 angles. One thread.
 *   build/ropecheck list --plugin build/plugins/rope_form.so      # the "forms:" line
 *   build/ropecheck verify --plugin build/plugins/rope_form.so
 * Built again with one bug each (the bug classes of the field; the plain apply is right in every
 * one; plugins/examples/CMakeLists.txt lists them):
 *   FORM_BUG_K_WITH_Q_HEAD_STRIDE   k's heads stepped with q's head stride (one stride for both)
 *   FORM_BUG_STRIDES_IGNORED        every view read as flat: [tokens][heads][head_dim] at offset
 *   FORM_BUG_ROTARY_DIM_IGNORED     with a norm, every feature rotated (rotary_dim ignored; the
 *                                   angles past the cache row computed, never read past it)
 *   FORM_BUG_COS_FOR_SIN            cos and sin both read at index i of the cache row
 *   FORM_BUG_EPS_DROPPED            r = 1 / sqrt(mean(x^2)): eps dropped from inside the root
 *   FORM_BUG_ONE_PLUS_FLIPPED       the weight conventions swapped: w where 1 + w is declared and
 *                                   1 + w where w is
 *   FORM_BUG_NORM_ROUNDED           the normalized value rounded to the storage (x r, then x r w')
 *                                   though fp32 precision is declared
 * and misbehaving inside apply_rope_form (a clear failure, never ropecheck's crash):
 *   FORM_MISBEHAVE_CRASH            writes through a wild pointer: SIGSEGV in the worker
 *   FORM_MISBEHAVE_OVERFLOW         writes one element past the end of the buffer
 *   FORM_MISBEHAVE_WRITES_CACHE     writes into the cos/sin cache (read-only)
 * and malformed (refused while loading, exit 2):
 *   FORM_BAD_CAPABILITIES           declares an angle source bit the ABI does not have
 *   FORM_NO_APPLY                   a forms struct without apply_rope_form
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "example_scaling.h" /* example_scaled_theta: every kind's theta_i */
#include "ropecheck/plugin.h"

#if defined(FORM_BUG_K_WITH_Q_HEAD_STRIDE)
#define PLUGIN_NAME "rope_form_k_with_q_head_stride"
#elif defined(FORM_BUG_STRIDES_IGNORED)
#define PLUGIN_NAME "rope_form_strides_ignored"
#elif defined(FORM_BUG_ROTARY_DIM_IGNORED)
#define PLUGIN_NAME "rope_form_rotary_dim_ignored"
#elif defined(FORM_BUG_COS_FOR_SIN)
#define PLUGIN_NAME "rope_form_cos_for_sin"
#elif defined(FORM_BUG_EPS_DROPPED)
#define PLUGIN_NAME "rope_form_eps_dropped"
#elif defined(FORM_BUG_ONE_PLUS_FLIPPED)
#define PLUGIN_NAME "rope_form_one_plus_flipped"
#elif defined(FORM_BUG_NORM_ROUNDED)
#define PLUGIN_NAME "rope_form_norm_rounded"
#elif defined(FORM_MISBEHAVE_CRASH)
#define PLUGIN_NAME "rope_form_crash"
#elif defined(FORM_MISBEHAVE_OVERFLOW)
#define PLUGIN_NAME "rope_form_overflow"
#elif defined(FORM_MISBEHAVE_WRITES_CACHE)
#define PLUGIN_NAME "rope_form_writes_cache"
#elif defined(FORM_BAD_CAPABILITIES)
#define PLUGIN_NAME "rope_form_bad_capabilities"
#elif defined(FORM_NO_APPLY)
#define PLUGIN_NAME "rope_form_no_apply"
#else
#define PLUGIN_NAME "rope_form"
#endif

/* ---- the storages: fp32 values, bf16 and fp16 bit patterns ------------------------------------ */

/* x rounded to nearest even into a 16-bit float with `mantissa_bits` and `bias` (bf16 7 and 127,
 * fp16 10 and 15), overflowing to Inf, keeping subnormals. In double: every step is exact but the
 * one rint. */
static uint16_t narrow16(double x, int mantissa_bits, int bias, double max) {
  const uint16_t sign = signbit(x) ? 0x8000u : 0u;
  const int exponent_bits = 15 - mantissa_bits;
  const uint16_t inf = (uint16_t)(((1u << exponent_bits) - 1u) << mantissa_bits);
  if (isnan(x)) return (uint16_t)(sign | inf | (1u << (mantissa_bits - 1)));
  const double a = fabs(x);
  if (a == 0) return sign;
  int e;
  frexp(a, &e); /* a in [2^(e-1), 2^e) */
  const int min_exponent = 1 - bias;
  const int exponent = e - 1 < min_exponent ? min_exponent : e - 1;
  const double spacing = ldexp(1.0, exponent - mantissa_bits);
  const double rounded = rint(a / spacing) * spacing; /* rint: to nearest even */
  if (rounded > max) return (uint16_t)(sign | inf);
  if (rounded < ldexp(1.0, min_exponent)) return (uint16_t)(sign | (uint16_t)(rounded / spacing)); /* subnormal */
  frexp(rounded, &e);
  const uint32_t field = (uint32_t)(e - 1 + bias);
  const uint32_t mantissa = (uint32_t)((ldexp(rounded, -(e - 1)) - 1.0) * ldexp(1.0, mantissa_bits));
  return (uint16_t)(sign | (field << mantissa_bits) | mantissa);
}

static float widen_fp16(uint16_t h) {
  const int exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
  float magnitude;
  if (exponent == 0) {
    magnitude = (float)ldexp(mantissa, -24); /* subnormal */
  } else if (exponent == 31) {
    magnitude = mantissa != 0 ? NAN : INFINITY;
  } else {
    magnitude = (float)ldexp(1024 + mantissa, exponent - 25);
  }
  return (h & 0x8000u) ? -magnitude : magnitude;
}

static float widen_bf16(uint16_t b) {
  const uint32_t bits = (uint32_t)b << 16;
  float value;
  memcpy(&value, &bits, sizeof value);
  return value;
}

/* Element i of a buffer of `dtype`, widened exactly. */
static float load(uint32_t dtype, const void* buffer, int64_t i) {
  if (dtype == ROPECHECK_DTYPE_FP32) return ((const float*)buffer)[i];
  const uint16_t bits = ((const uint16_t*)buffer)[i];
  return dtype == ROPECHECK_DTYPE_BF16 ? widen_bf16(bits) : widen_fp16(bits);
}

/* x rounded once to `dtype` and stored at element i. */
static void store(uint32_t dtype, void* buffer, int64_t i, double x) {
  if (dtype == ROPECHECK_DTYPE_FP32) {
    ((float*)buffer)[i] = (float)x;
  } else if (dtype == ROPECHECK_DTYPE_BF16) {
    ((uint16_t*)buffer)[i] = narrow16(x, 7, 127, 0x1.FCp127);
  } else {
    ((uint16_t*)buffer)[i] = narrow16(x, 10, 15, 65504.0);
  }
}

/* x rounded to `dtype` and widened back: the value an unfused chain keeps in the model's dtype. */
static float in_storage(uint32_t dtype, double x) {
  uint16_t bits;
  if (dtype == ROPECHECK_DTYPE_FP32) return (float)x;
  store(dtype, &bits, 0, x);
  return load(dtype, &bits, 0);
}

/* ---- one call's angles ------------------------------------------------------------------------ */

/* What a call turns with: the spec's theta table (with a spec source) or the cache. */
typedef struct angle_source {
  const ropecheck_plugin_spec* spec;
  const double* theta;        /* rotary_dim/2 entries */
  const float* cos_sin_cache; /* NULL: from the spec */
} angle_source;

/* cos and sin (attention factor included) of the `turned` pairs at position m. */
static void token_angles(const angle_source* a, int64_t m, int turned, double* c, double* s) {
  const ropecheck_plugin_spec* spec = a->spec;
  const int pairs = spec->rotary_dim / 2;
  for (int i = 0; i < turned; ++i) {
    if (i >= pairs) { /* only the ROTARY_DIM_IGNORED bug turns more: angles computed, not read */
      const double angle = (double)m * pow(spec->base, -2.0 * i / spec->rotary_dim);
      c[i] = spec->attention_factor * cos(angle);
      s[i] = spec->attention_factor * sin(angle);
    } else if (a->cos_sin_cache != NULL) {
      const float* row = a->cos_sin_cache + m * spec->rotary_dim; /* cos half, then sin half */
      c[i] = row[i];
#if defined(FORM_BUG_COS_FOR_SIN)
      s[i] = row[i]; /* BUG: the same index for both */
#else
      s[i] = row[pairs + i];
#endif
    } else {
      const double angle = (double)m * a->theta[i];
      c[i] = spec->attention_factor * cos(angle);
      s[i] = spec->attention_factor * sin(angle);
    }
  }
}

/* ---- one head --------------------------------------------------------------------------------- */

/* x (head_dim features, widened) RMS-normalized in place: r in double, the result kept in fp32. */
static void normalize(const ropecheck_plugin_qk_norm* norm, const float* weight, uint32_t dtype, int d, float* x) {
  double squares = 0;
  for (int f = 0; f < d; ++f) squares += (double)x[f] * x[f];
#if defined(FORM_BUG_EPS_DROPPED)
  const double r = 1.0 / sqrt(squares / d); /* BUG: no eps */
#else
  const double r = 1.0 / sqrt(squares / d + norm->eps);
#endif
  int one_plus = norm->weight == ROPECHECK_NORM_WEIGHT_ONE_PLUS;
#if defined(FORM_BUG_ONE_PLUS_FLIPPED)
  one_plus = !one_plus; /* BUG: the other model family's convention */
#endif
  int rounded = norm->precision == ROPECHECK_NORM_STORAGE;
#if defined(FORM_BUG_NORM_ROUNDED)
  rounded = 1; /* BUG: the unfused chain's roundings, though fp32 is declared */
#endif
  for (int f = 0; f < d; ++f) {
    const double w = one_plus ? 1.0 + weight[f] : weight[f];
    x[f] = rounded ? in_storage(dtype, in_storage(dtype, x[f] * r) * w) : (float)(x[f] * r * w);
  }
}

/* The head whose features start at element `start` of `buffer`: normalized (norm not NULL), its
 * first 2 * turned features rotated by (c, s), written back once rounded. `x` is scratch. */
static void norm_rope_head(const ropecheck_plugin_spec* spec, uint32_t dtype, void* buffer, int64_t start,
                           const ropecheck_plugin_qk_norm* norm, const float* weight, int turned, const double* c,
                           const double* s, float* x) {
  const int d = spec->head_dim;
  for (int f = 0; f < d; ++f) x[f] = load(dtype, buffer, start + f);
  if (norm != NULL) normalize(norm, weight, dtype, d, x);
  for (int i = 0; i < turned; ++i) {
    /* interleaved (2i, 2i+1); half_split (i, i + the rotated features' half) */
    const int a = spec->layout == ROPECHECK_LAYOUT_INTERLEAVED ? 2 * i : i;
    const int b = spec->layout == ROPECHECK_LAYOUT_INTERLEAVED ? 2 * i + 1 : i + turned;
    const double xa = x[a], xb = x[b];
    store(dtype, buffer, start + a, xa * c[i] - xb * s[i]);
    store(dtype, buffer, start + b, xa * s[i] + xb * c[i]);
  }
  /* The tail: normalized, not rotated. Without a norm it is left alone, bit for bit. */
  if (norm != NULL) {
    for (int f = 2 * turned; f < d; ++f) store(dtype, buffer, start + f, x[f]);
  }
}

/* ---- the views -------------------------------------------------------------------------------- */

/* A view as this kernel walks it. */
static ropecheck_plugin_head_view as_read(const ropecheck_plugin_head_view* view, int head_dim) {
  ropecheck_plugin_head_view v = *view;
#if defined(FORM_BUG_STRIDES_IGNORED)
  v.head_stride = head_dim; /* BUG: [tokens][heads][head_dim] from offset, whatever the strides */
  v.token_stride = v.heads * head_dim;
#else
  (void)head_dim;
#endif
  return v;
}

/* Every head of `view` at token t. */
static void view_token(const ropecheck_plugin_form_call* call, const ropecheck_plugin_head_view* view,
                       const float* weight, int64_t t, int turned, const double* c, const double* s, float* x) {
  for (int64_t h = 0; h < view->heads; ++h) {
    const int64_t start = view->offset + t * view->token_stride + h * view->head_stride;
    norm_rope_head(call->spec, call->dtype, call->buffer, start, call->norm, weight, turned, c, s, x);
  }
}

/* ---- the entries ------------------------------------------------------------------------------ */

typedef struct scratch {
  double *theta, *c, *s;
  float* x;
} scratch;

static int make_scratch(const ropecheck_plugin_spec* spec, scratch* k) {
  const size_t pairs = (size_t)spec->head_dim / 2; /* the most a call turns */
  k->theta = malloc(sizeof(double) * pairs);
  k->c = malloc(sizeof(double) * pairs);
  k->s = malloc(sizeof(double) * pairs);
  k->x = malloc(sizeof(float) * (size_t)spec->head_dim);
  if (k->theta == NULL || k->c == NULL || k->s == NULL || k->x == NULL) return 0;
  for (int i = 0; i < spec->rotary_dim / 2; ++i) k->theta[i] = example_scaled_theta(spec, i);
  return 1;
}

static void free_scratch(scratch* k) {
  free(k->theta);
  free(k->c);
  free(k->s);
  free(k->x);
}

static int32_t apply_rope_form(void* opaque, const ropecheck_plugin_form_call* call) {
  (void)opaque;
  const ropecheck_plugin_spec* spec = call->spec;
  scratch k;
  if (!make_scratch(spec, &k)) {
    free_scratch(&k);
    return ROPECHECK_PLUGIN_ERROR;
  }
  int turned = spec->rotary_dim / 2;
#if defined(FORM_BUG_ROTARY_DIM_IGNORED)
  if (call->norm != NULL) turned = spec->head_dim / 2; /* BUG: normalized, so every feature turns */
#endif
  const angle_source angles = {spec, k.theta,
                               call->angle_source == ROPECHECK_ANGLE_SOURCE_COS_SIN_CACHE ? call->cos_sin_cache : NULL};
  const ropecheck_plugin_head_view q = as_read(call->q, spec->head_dim);
  ropecheck_plugin_head_view kv = {0, 0, 0, 0};
  if (call->k != NULL) {
    kv = as_read(call->k, spec->head_dim);
#if defined(FORM_BUG_K_WITH_Q_HEAD_STRIDE)
    kv.head_stride = q.head_stride; /* BUG: one head stride for both views */
#endif
  }
  for (int64_t t = 0; t < call->tokens; ++t) {
    token_angles(&angles, call->positions[t], turned, k.c, k.s);
    view_token(call, &q, call->norm != NULL ? call->norm->q_weight : NULL, t, turned, k.c, k.s, k.x);
    if (call->k != NULL) {
      view_token(call, &kv, call->norm != NULL ? call->norm->k_weight : NULL, t, turned, k.c, k.s, k.x);
    }
  }
#if defined(FORM_MISBEHAVE_CRASH)
  {
    volatile uintptr_t address = 64; /* a wild pointer (not null: UBSan would stop a null store first) */
    *(volatile float*)address = 1.0f;
  }
#elif defined(FORM_MISBEHAVE_OVERFLOW)
  store(call->dtype, call->buffer, call->elements, 1.0); /* one element past the end of the buffer */
#elif defined(FORM_MISBEHAVE_WRITES_CACHE)
  if (call->cos_sin_cache != NULL) ((float*)call->cos_sin_cache)[0] = 2.0f; /* read-only */
#endif
  free_scratch(&k);
  return ROPECHECK_PLUGIN_OK;
}

/* ABI 2's call: flat q [tokens][q_heads][head_dim] and k, each in its own array, angles from the
 * spec, no norm. */
static int32_t apply(void* opaque, const ropecheck_plugin_call* call) {
  (void)opaque;
  const ropecheck_plugin_spec* spec = call->spec;
  scratch k;
  if (!make_scratch(spec, &k)) {
    free_scratch(&k);
    return ROPECHECK_PLUGIN_ERROR;
  }
  const angle_source angles = {spec, k.theta, NULL};
  const int turned = spec->rotary_dim / 2;
  for (int64_t t = 0; t < call->tokens; ++t) {
    token_angles(&angles, call->positions[t], turned, k.c, k.s);
    for (int64_t h = 0; h < call->q_heads; ++h) {
      norm_rope_head(spec, call->dtype, call->q, (t * call->q_heads + h) * spec->head_dim, NULL, NULL, turned, k.c,
                     k.s, k.x);
    }
    for (int64_t h = 0; h < call->k_heads; ++h) {
      norm_rope_head(spec, call->dtype, call->k, (t * call->k_heads + h) * spec->head_dim, NULL, NULL, turned, k.c,
                     k.s, k.x);
    }
  }
  free_scratch(&k);
  return ROPECHECK_PLUGIN_OK;
}

static int32_t query_capabilities(void* opaque, ropecheck_plugin_capabilities* caps) {
  (void)opaque;
  caps->layouts = (1u << ROPECHECK_LAYOUT_INTERLEAVED) | (1u << ROPECHECK_LAYOUT_HALF_SPLIT);
  caps->dtypes = ROPECHECK_DTYPE_FP32 | ROPECHECK_DTYPE_BF16 | ROPECHECK_DTYPE_FP16;
  caps->angle_precisions = 1u << ROPECHECK_ANGLES_FP64;
  caps->partial_rotary = 1;
  caps->scaling_kinds = EXAMPLE_EVERY_SCALING_KIND;
  return ROPECHECK_PLUGIN_OK;
}

static int32_t query_form_capabilities(void* opaque, ropecheck_plugin_form_capabilities* caps) {
  (void)opaque;
#if defined(FORM_NO_APPLY)
  (void)apply_rope_form; /* written, but not in the forms struct */
#endif
  caps->dtypes = ROPECHECK_DTYPE_FP32 | ROPECHECK_DTYPE_BF16 | ROPECHECK_DTYPE_FP16;
  caps->angle_sources = (1u << ROPECHECK_ANGLE_SOURCE_SPEC) | (1u << ROPECHECK_ANGLE_SOURCE_COS_SIN_CACHE);
#if defined(FORM_BAD_CAPABILITIES)
  caps->angle_sources |= 1u << 5; /* no such source */
#endif
  caps->strided = 1;
  caps->k_optional = 1;
  caps->plain_calls = 1;
  caps->norm_weights = (1u << ROPECHECK_NORM_WEIGHT_PLAIN) | (1u << ROPECHECK_NORM_WEIGHT_ONE_PLUS);
  caps->norm_precision = ROPECHECK_NORM_FP32;
  return ROPECHECK_PLUGIN_OK;
}

static const ropecheck_plugin_forms kForms = {
    sizeof(ropecheck_plugin_forms),
    0,
    query_form_capabilities,
#if defined(FORM_NO_APPLY)
    NULL, /* malformed: the entry without its call */
#else
    apply_rope_form,
#endif
    {0},
};

static const ropecheck_plugin_v6 kPlugin = {
    ROPECHECK_PLUGIN_ABI_V6,
    sizeof(ropecheck_plugin_v6),
    PLUGIN_NAME,
    "example ABI 6 plugin: RoPE in the engines' call forms (strided q and k in one buffer, k optional, "
    "angles from the spec or a cos/sin cache; fp32, bf16, fp16) with QK-norm before it (w or 1 + w, fp32)",
    NULL, /* no init */
    query_capabilities,
    apply,
    NULL, /* no teardown */
    NULL, /* no backward */
    NULL, /* no fused KV-cache write */
    NULL,
    &kForms,
};

ROPECHECK_PLUGIN_EXPORT const ropecheck_plugin_v6* ropecheck_plugin_entry(void) { return &kPlugin; }
