/* fused_cache_rope: an ABI 5 plugin in plain C99, RoPE fused with the paged KV-cache write as
 * inference engines ship it (vLLM's rotary_embedding + reshape_and_cache_flash, FlashInfer's
 * append_paged_kv_cache, DeepSeek MLA's concat_and_cache_mla), the template for porting one.
 * apply_rope_cache rotates q in place, rotates k, and writes the rotated k and v into the cache
 * at each token's slot (block = slot / block_size, offset = slot % block_size), on every layout
 * (NHD, HND, MLA's [kv_c | k_pe] row), every storage (fp32; bf16 and fp16 to nearest even; FP8
 * e4m3 and e5m2 scaled in fp32, then narrowed to nearest even with saturation, written here in
 * plain C), both scale directions, per-tensor and per-head scales. Its padding rule is vLLM's:
 * a padding token (slot < 0) has its q rotated and writes nothing (ROPECHECK_PADDING_ROTATE_Q_ONLY).
 * apply is the same rotation alone (ABI 2's call). Every scaling kind (example_scaling.h), both
 * pair layouts, partial rotary, GQA; tables in double: fp64 angles. One thread.
 *   build/ropecheck list --json --plugin build/plugins/fused_cache_rope.so   # "rope_cache"
 *   build/ropecheck verify --plugin build/plugins/fused_cache_rope.so
 * Built again with one bug each (the fused kernels' bug classes of the field; the plain apply is
 * right in every one; plugins/examples/CMakeLists.txt lists them):
 *   CACHE_BUG_SLOT_MINUS_ONE      no padding check: slot -1 indexes as a tensor index wraps, into
 *                                 the cache's last slot (vLLM PR #43869)
 *   CACHE_BUG_BLOCK_OFFSET_SWAPPED  block = slot % block_size, offset = slot / block_size
 *   CACHE_BUG_HND_STRIDE_ON_NHD   an NHD cache written with HND's index (a layout flag ignored)
 *   CACHE_BUG_SCALE_FLIPPED       FP8 divides where it must multiply and multiplies where it must
 *                                 divide (vLLM divides, FlashInfer and TensorRT-LLM multiply)
 *   CACHE_BUG_NO_SATURATION       FP8 narrowing without saturation: past the largest value is NaN
 *                                 (e4m3) or Inf (e5m2), as eager torch .to(float8_e4m3fn)
 *   CACHE_BUG_V_IN_K              k's place gets v as it came, unrotated (MLA: k_pe's place gets
 *                                 kv_c's first features)
 *   CACHE_BUG_PADDING_Q_SKIPPED   declares rotate_q_only, but returns early on a padding token,
 *                                 before its q is rotated
 * and misbehaving inside apply_rope_cache (a clear failure, never ropecheck's crash):
 *   CACHE_MISBEHAVE_CRASH         writes through a wild pointer: SIGSEGV in the worker
 *   CACHE_MISBEHAVE_OVERFLOW      writes one element past the end of k_cache
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "example_rope.h"    /* example_pair */
#include "example_scaling.h" /* example_scaled_theta: every kind's theta_i */
#include "ropecheck/plugin.h"

#if defined(CACHE_BUG_SLOT_MINUS_ONE)
#define PLUGIN_NAME "fused_cache_slot_minus_one"
#elif defined(CACHE_BUG_BLOCK_OFFSET_SWAPPED)
#define PLUGIN_NAME "fused_cache_block_offset_swapped"
#elif defined(CACHE_BUG_HND_STRIDE_ON_NHD)
#define PLUGIN_NAME "fused_cache_hnd_stride_on_nhd"
#elif defined(CACHE_BUG_SCALE_FLIPPED)
#define PLUGIN_NAME "fused_cache_scale_flipped"
#elif defined(CACHE_BUG_NO_SATURATION)
#define PLUGIN_NAME "fused_cache_no_saturation"
#elif defined(CACHE_BUG_V_IN_K)
#define PLUGIN_NAME "fused_cache_v_in_k"
#elif defined(CACHE_BUG_PADDING_Q_SKIPPED)
#define PLUGIN_NAME "fused_cache_padding_q_skipped"
#elif defined(CACHE_MISBEHAVE_CRASH)
#define PLUGIN_NAME "fused_cache_crash"
#elif defined(CACHE_MISBEHAVE_OVERFLOW)
#define PLUGIN_NAME "fused_cache_overflow"
#else
#define PLUGIN_NAME "fused_cache_rope"
#endif

/* ---- narrowing a float to a small float format, round to nearest even --------------------- */

/* A binary format narrower than float: its mantissa bits, its exponent bias, its largest finite
 * value and the codes (without the sign) of that value, of overflow (Inf; e4m3 has none: NaN) and
 * of NaN. */
typedef struct small_format {
  int mantissa_bits, bias, sign_shift;
  double max;
  uint32_t max_code, overflow_code, nan_code;
} small_format;

static const small_format kBf16 = {7, 127, 15, 0x1.FCp127, 0x7F7F, 0x7F80, 0x7FC0};
static const small_format kFp16 = {10, 15, 15, 65504.0, 0x7BFF, 0x7C00, 0x7E00};
static const small_format kE4m3 = {3, 7, 7, 448.0, 0x7E, 0x7F, 0x7F};
static const small_format kE5m2 = {2, 15, 7, 57344.0, 0x7B, 0x7C, 0x7E};

/* x to nearest even in `f`. Saturating (FP8 in a cache): what rounds past the largest finite
 * value, Inf included, becomes it; otherwise it overflows to Inf (NaN for e4m3), as IEEE and a
 * plain cast do. A NaN stays a NaN. In double: every step below is exact but the one rint. */
static uint32_t narrow(float x, const small_format* f, int saturate) {
  const uint32_t sign = signbit(x) ? 1u << f->sign_shift : 0u;
  if (isnan(x)) return sign | f->nan_code;
  const double a = fabs((double)x);
  if (isinf(x)) return sign | (saturate ? f->max_code : f->overflow_code);
  if (a == 0) return sign;
  /* The spacing of f's values around a: that of a's binade, or the subnormals' below the
   * smallest normal 2^(1 - bias). */
  int e;
  frexp(a, &e); /* a = m 2^e, m in [0.5, 1): a's binade is [2^(e-1), 2^e) */
  const int min_exponent = 1 - f->bias;
  const int exponent = e - 1 < min_exponent ? min_exponent : e - 1;
  const double spacing = ldexp(1.0, exponent - f->mantissa_bits);
  const double rounded = rint(a / spacing) * spacing; /* rint: to nearest even (the default mode) */
  if (rounded > f->max) return sign | (saturate ? f->max_code : f->overflow_code);
  /* The code: exponent field and mantissa. A subnormal has field 0; one that rounded up to
   * 2^min_exponent gets field 1 from the same sum. */
  if (rounded < ldexp(1.0, min_exponent)) return sign | (uint32_t)(rounded / spacing);
  frexp(rounded, &e);
  const uint32_t field = (uint32_t)(e - 1 + f->bias);
  const uint32_t mantissa = (uint32_t)((ldexp(rounded, -(e - 1)) - 1.0) * ldexp(1.0, f->mantissa_bits));
  return sign | (field << f->mantissa_bits) | mantissa;
}

/* ---- the cache -------------------------------------------------------------------------------- */

/* Element index of feature 0 of kv head `head` at `slot` (>= 0): the layouts of plugin.h. */
static int64_t row_index(const ropecheck_plugin_cache* c, int64_t slot, int64_t head) {
  const int64_t features = c->layout == ROPECHECK_CACHE_MLA ? c->latent_dim + c->head_dim : c->head_dim;
#if defined(CACHE_BUG_BLOCK_OFFSET_SWAPPED)
  const int64_t block = slot % c->block_size, offset = slot / c->block_size; /* BUG: swapped */
#else
  const int64_t block = slot / c->block_size, offset = slot % c->block_size;
#endif
#if defined(CACHE_BUG_HND_STRIDE_ON_NHD)
  if (c->layout != ROPECHECK_CACHE_MLA) { /* BUG: HND's strides whatever the layout */
#else
  if (c->layout == ROPECHECK_CACHE_HND) {
#endif
    return ((block * c->kv_heads + head) * c->block_size + offset) * features;
  }
  return ((block * c->block_size + offset) * c->kv_heads + head) * features;
}

/* The scale of kv head `head`: one per tensor or one per head. */
static float scale_of(const float* scales, int64_t count, int64_t head) {
  return count == 1 ? scales[0] : scales[head];
}

/* x into the cache's storage at element `index`; FP8 scaled in fp32 first. */
static void store(const ropecheck_plugin_cache* c, void* cache, int64_t index, float x, float scale) {
  int multiply = c->scale_direction == ROPECHECK_SCALE_MULTIPLY;
#if defined(CACHE_BUG_SCALE_FLIPPED)
  multiply = !multiply; /* BUG: the other engine's convention */
#endif
#if defined(CACHE_BUG_NO_SATURATION)
  const int saturate = 0; /* BUG: a plain cast */
#else
  const int saturate = 1;
#endif
  switch (c->storage) {
    case ROPECHECK_CACHE_FP32: ((float*)cache)[index] = x; return;
    case ROPECHECK_CACHE_BF16: ((uint16_t*)cache)[index] = (uint16_t)narrow(x, &kBf16, 0); return;
    case ROPECHECK_CACHE_FP16: ((uint16_t*)cache)[index] = (uint16_t)narrow(x, &kFp16, 0); return;
    default: break;
  }
  const float stored = multiply ? x * scale : x / scale;
  const small_format* f = c->storage == ROPECHECK_CACHE_FP8_E4M3 ? &kE4m3 : &kE5m2;
  ((uint8_t*)cache)[index] = (uint8_t)narrow(stored, f, saturate);
}

/* ---- the rotation ----------------------------------------------------------------------------- */

/* One head's row rotated from `in` into `out` (which may be `in`): each pair in double with cos
 * and sin times the attention factor, one rounding to float; the tail copied. */
static void rotate_row(const ropecheck_plugin_spec* s, const double* theta, int64_t position, const float* in,
                       float* out) {
  for (int f = s->rotary_dim; f < s->head_dim; ++f) out[f] = in[f];
  for (int i = 0; i < s->rotary_dim / 2; ++i) {
    const double angle = (double)position * theta[i];
    const double c = s->attention_factor * cos(angle), sn = s->attention_factor * sin(angle);
    int64_t a, b;
    example_pair(s, i, &a, &b);
    const double x1 = in[a], x2 = in[b];
    out[a] = (float)(x1 * c - x2 * sn);
    out[b] = (float)(x1 * sn + x2 * c);
  }
}

static double* theta_table(const ropecheck_plugin_spec* s) {
  double* theta = malloc(sizeof(double) * (size_t)(s->rotary_dim / 2));
  if (theta == NULL) return NULL;
  for (int i = 0; i < s->rotary_dim / 2; ++i) theta[i] = example_scaled_theta(s, i);
  return theta;
}

/* ---- the entries ------------------------------------------------------------------------------ */

static int32_t apply(void* opaque, const ropecheck_plugin_call* call) {
  (void)opaque;
  const ropecheck_plugin_spec* s = call->spec;
  if (call->dtype != ROPECHECK_DTYPE_FP32) return ROPECHECK_PLUGIN_UNSUPPORTED;
  double* theta = theta_table(s);
  if (theta == NULL) return ROPECHECK_PLUGIN_ERROR;
  float* q = call->q;
  float* k = call->k;
  for (int64_t t = 0; t < call->tokens; ++t) {
    for (int64_t h = 0; h < call->q_heads; ++h) {
      float* row = q + (t * call->q_heads + h) * s->head_dim;
      rotate_row(s, theta, call->positions[t], row, row);
    }
    for (int64_t h = 0; h < call->k_heads; ++h) {
      float* row = k + (t * call->k_heads + h) * s->head_dim;
      rotate_row(s, theta, call->positions[t], row, row);
    }
  }
  free(theta);
  return ROPECHECK_PLUGIN_OK;
}

/* One token's cache write: every kv head's rotated k and its v (MLA: the row [kv_c | k_pe]). */
static void write_token(const ropecheck_plugin_cache_call* call, const double* theta, int64_t t, int64_t slot,
                        float* rotated) {
  const ropecheck_plugin_cache* c = call->cache;
  const ropecheck_plugin_spec* s = call->spec;
  const int64_t d = c->head_dim;
  for (int64_t h = 0; h < c->kv_heads; ++h) {
    const float* k = call->k + (t * c->kv_heads + h) * d;
    rotate_row(s, theta, call->positions[t], k, rotated);
#if defined(CACHE_BUG_V_IN_K)
    /* BUG: v (MLA: kv_c's first features) written where the rotated k goes. */
    memcpy(rotated, call->v + (t * c->kv_heads + h) * (c->layout == ROPECHECK_CACHE_MLA ? c->latent_dim : d),
           sizeof(float) * (size_t)d);
#endif
    const int64_t row = row_index(c, slot, h);
    const float k_scale = c->k_scale != NULL ? scale_of(c->k_scale, c->k_scale_count, h) : 1.0f;
    if (c->layout == ROPECHECK_CACHE_MLA) { /* one row: the latent (k's scale), then k_pe */
      const float* latent = call->v + t * c->latent_dim;
      for (int64_t f = 0; f < c->latent_dim; ++f) store(c, call->k_cache, row + f, latent[f], k_scale);
      for (int64_t f = 0; f < d; ++f) store(c, call->k_cache, row + c->latent_dim + f, rotated[f], k_scale);
      continue;
    }
    const float v_scale = c->v_scale != NULL ? scale_of(c->v_scale, c->v_scale_count, h) : 1.0f;
    const float* v = call->v + (t * c->kv_heads + h) * d;
    for (int64_t f = 0; f < d; ++f) {
      store(c, call->k_cache, row + f, rotated[f], k_scale);
      store(c, call->v_cache, row + f, v[f], v_scale);
    }
  }
}

static int32_t apply_rope_cache(void* opaque, const ropecheck_plugin_cache_call* call) {
  (void)opaque;
  const ropecheck_plugin_spec* s = call->spec;
  const ropecheck_plugin_cache* c = call->cache;
  double* theta = theta_table(s);
  float* rotated = malloc(sizeof(float) * (size_t)c->head_dim);
  if (theta == NULL || rotated == NULL) {
    free(theta);
    free(rotated);
    return ROPECHECK_PLUGIN_ERROR;
  }
  for (int64_t t = 0; t < call->tokens; ++t) {
    int64_t slot = call->slots[t];
#if defined(CACHE_BUG_PADDING_Q_SKIPPED)
    if (slot < 0) continue; /* BUG: the whole token skipped, though q must be rotated */
#endif
    for (int64_t h = 0; h < call->q_heads; ++h) {
      float* row = call->q + (t * call->q_heads + h) * s->head_dim;
      rotate_row(s, theta, call->positions[t], row, row);
    }
#if defined(CACHE_BUG_SLOT_MINUS_ONE)
    if (slot < 0) slot += c->blocks * c->block_size; /* BUG: -1 indexes as torch's [-1] would */
#else
    if (slot < 0) continue; /* padding: q rotated, nothing written */
#endif
    write_token(call, theta, t, slot, rotated);
  }
#if defined(CACHE_MISBEHAVE_CRASH)
  {
    volatile uintptr_t address = 64; /* a wild pointer (not null: UBSan would stop a null store first) */
    *(volatile float*)address = call->q[0];
  }
#elif defined(CACHE_MISBEHAVE_OVERFLOW)
  {
    const int64_t features = c->layout == ROPECHECK_CACHE_MLA ? c->latent_dim + c->head_dim : c->head_dim;
    const int64_t elements = c->blocks * c->block_size * c->kv_heads * features;
    store(c, call->k_cache, elements, 1.0f, 1.0f); /* one element past the end of k_cache */
  }
#endif
  free(rotated);
  free(theta);
  return ROPECHECK_PLUGIN_OK;
}

static int32_t query_capabilities(void* opaque, ropecheck_plugin_capabilities* caps) {
  (void)opaque;
  caps->layouts = (1u << ROPECHECK_LAYOUT_INTERLEAVED) | (1u << ROPECHECK_LAYOUT_HALF_SPLIT);
  caps->dtypes = ROPECHECK_DTYPE_FP32;
  caps->angle_precisions = 1u << ROPECHECK_ANGLES_FP64;
  caps->partial_rotary = 1;
  caps->scaling_kinds = EXAMPLE_EVERY_SCALING_KIND;
  return ROPECHECK_PLUGIN_OK;
}

static int32_t query_rope_cache_capabilities(void* opaque, ropecheck_plugin_cache_capabilities* caps) {
  (void)opaque;
  caps->layouts = (1u << ROPECHECK_CACHE_NHD) | (1u << ROPECHECK_CACHE_HND) | (1u << ROPECHECK_CACHE_MLA);
  caps->storages = (1u << ROPECHECK_CACHE_FP32) | (1u << ROPECHECK_CACHE_BF16) | (1u << ROPECHECK_CACHE_FP16) |
                   (1u << ROPECHECK_CACHE_FP8_E4M3) | (1u << ROPECHECK_CACHE_FP8_E5M2);
  caps->scale_directions = (1u << ROPECHECK_SCALE_MULTIPLY) | (1u << ROPECHECK_SCALE_DIVIDE);
  caps->padding = ROPECHECK_PADDING_ROTATE_Q_ONLY;
  return ROPECHECK_PLUGIN_OK;
}

static const ropecheck_plugin_v5 kPlugin = {
    ROPECHECK_PLUGIN_ABI_V5,
    sizeof(ropecheck_plugin_v5),
    PLUGIN_NAME,
    "example ABI 5 plugin: RoPE fused with the paged KV-cache write (NHD, HND, MLA; fp32, bf16, "
    "fp16, FP8 e4m3/e5m2 saturating, either scale direction), padding rotates q only",
    NULL, /* no init */
    query_capabilities,
    apply,
    NULL, /* no teardown */
    NULL, /* no backward */
    apply_rope_cache,
    query_rope_cache_capabilities,
    {0},
};

ROPECHECK_PLUGIN_EXPORT const ropecheck_plugin_v5* ropecheck_plugin_entry(void) { return &kPlugin; }
