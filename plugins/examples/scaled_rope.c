/* scaled_rope: a complete ABI 2 plugin in plain C99, the template for porting a long-context
 * kernel. Every frequency scaling kind (linear, NTK, dynamic NTK, YaRN, Llama 3, LongRoPE) with the
 * attention factor on cos and sin, both layouts, partial rotary, GQA, fp32 q/k. The scaled
 * inverse frequencies are formed in double (the formulas at the top of ropecheck/plugin.h, in
 * example_scaling.h), the angles m * theta_i in double, sin/cos from libm: it declares fp64 angle
 * precision.
 * init/teardown show the context: init allocates the frequency table this plugin reuses between
 * calls (a real kernel's cos/sin cache) and says what it set up; teardown frees it.
 *   cmake --build build --target plugin_scaled_rope
 *   build/ropecheck list --plugin build/plugins/scaled_rope.so
 *   build/ropecheck verify --plugin build/plugins/scaled_rope.so    # passes every property
 * Built again with SCALED_LLAMA3_UNSMOOTHED (plugin_llama3_unsmoothed_rope): Llama 3's smooth band
 * replaced by the nearer of its two ends, a bug the scaled properties must catch.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "example_rope.h"    /* example_pair */
#include "example_scaling.h" /* example_scaled_theta: every kind's theta_i */
#include "ropecheck/plugin.h"

#if defined(SCALED_LLAMA3_UNSMOOTHED)
#define PLUGIN_NAME "llama3_unsmoothed_rope"
#else
#define PLUGIN_NAME "scaled_rope"
#endif

/* What init sets up: room for one frequency table, grown on demand. */
typedef struct context {
  double* theta;
  int capacity; /* entries */
} context;

/* theta_i of pair i: example_scaling.h's formulas, but for the bug build's Llama 3 band. */
static double scaled_theta(const ropecheck_plugin_spec* s, int i) {
#if defined(SCALED_LLAMA3_UNSMOOTHED)
  if (s->scaling_kind == ROPECHECK_SCALING_LLAMA3) {
    const double pi = 3.14159265358979323846;
    const double theta = example_unscaled_theta(s->base, i, s->rotary_dim);
    const double smooth = example_llama3_smooth(s, 2.0 * pi / theta);
    /* BUG: the band snapped to its nearer end */
    if (smooth > 0 && smooth < 1) return smooth < 0.5 ? theta / s->factor : theta;
  }
#endif
  return example_scaled_theta(s, i);
}

/* Rotates every head of one fp32 tensor ([tokens][heads][head_dim]) in place with the table
 * theta: each pair in double, cos and sin times the attention factor, one rounding to float. */
static void rotate(const ropecheck_plugin_spec* s, const double* theta, float* x, int64_t heads,
                   const int64_t* positions, int64_t tokens) {
  for (int64_t t = 0; t < tokens; ++t) {
    for (int i = 0; i < s->rotary_dim / 2; ++i) {
      const double angle = (double)positions[t] * theta[i];
      const double c = cos(angle) * s->attention_factor, sn = sin(angle) * s->attention_factor;
      int64_t a, b;
      example_pair(s, i, &a, &b);
      for (int64_t h = 0; h < heads; ++h) {
        float* row = x + (t * heads + h) * s->head_dim;
        const double xa = row[a], xb = row[b];
        row[a] = (float)(xa * c - xb * sn);
        row[b] = (float)(xa * sn + xb * c);
      }
    }
  }
}

static int32_t init(const ropecheck_plugin_init_args* args, void** out) {
  context* ctx = calloc(1, sizeof *ctx);
  if (ctx == NULL) {
    snprintf(args->description, args->description_bytes, "out of memory");
    return ROPECHECK_PLUGIN_ERROR;
  }
  *out = ctx;
  snprintf(args->description, args->description_bytes,
           "double-precision reference, single-threaded (up to %d threads offered)",
           (int)args->max_threads);
  return ROPECHECK_PLUGIN_OK;
}

static void teardown(void* opaque) {
  context* ctx = opaque;
  free(ctx->theta);
  free(ctx);
}

static int32_t query_capabilities(void* opaque, ropecheck_plugin_capabilities* caps) {
  (void)opaque;
  caps->layouts = (1u << ROPECHECK_LAYOUT_INTERLEAVED) | (1u << ROPECHECK_LAYOUT_HALF_SPLIT);
  caps->dtypes = ROPECHECK_DTYPE_FP32;
  caps->angle_precisions = 1u << ROPECHECK_ANGLES_FP64;
  caps->max_head_dim = 0;
  caps->partial_rotary = 1;
  caps->scaling_kinds = EXAMPLE_EVERY_SCALING_KIND;
  caps->max_position = 0; /* ropecheck's limit */
  return ROPECHECK_PLUGIN_OK;
}

static int32_t apply(void* opaque, const ropecheck_plugin_call* call) {
  context* ctx = opaque;
  const ropecheck_plugin_spec* s = call->spec;
  if (call->dtype != ROPECHECK_DTYPE_FP32) return ROPECHECK_PLUGIN_UNSUPPORTED;
  const int pairs = s->rotary_dim / 2;
  if (pairs > ctx->capacity) {
    double* grown = realloc(ctx->theta, (size_t)pairs * sizeof *grown);
    if (grown == NULL) return ROPECHECK_PLUGIN_ERROR;
    ctx->theta = grown;
    ctx->capacity = pairs;
  }
  for (int i = 0; i < pairs; ++i) ctx->theta[i] = scaled_theta(s, i);
  rotate(s, ctx->theta, call->q, call->q_heads, call->positions, call->tokens);
  rotate(s, ctx->theta, call->k, call->k_heads, call->positions, call->tokens);
  return ROPECHECK_PLUGIN_OK;
}

static const ropecheck_plugin_v2 kPlugin = {
    ROPECHECK_PLUGIN_ABI_V2,
    sizeof(ropecheck_plugin_v2),
    PLUGIN_NAME,
    "example ABI 2 plugin: every scaling kind and the attention factor, double angles, libm "
    "sin/cos, both layouts, partial rotary, GQA",
    init,
    query_capabilities,
    apply,
    teardown,
    {0, 0, 0, 0},
};

ROPECHECK_PLUGIN_EXPORT const ropecheck_plugin_v2* ropecheck_plugin_entry(void) { return &kPlugin; }
