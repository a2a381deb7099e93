/* scaled_rope: a complete ABI 2 plugin in plain C99, the template for porting a long-context
 * kernel. Every frequency scaling kind (linear, NTK, dynamic NTK, YaRN, Llama 3, LongRoPE) with the
 * attention factor on cos and sin, both layouts, partial rotary, GQA, fp32 q/k. The scaled
 * inverse frequencies are formed in double (the formulas at the top of ropecheck/plugin.h), the
 * angles m * theta_i in double, sin/cos from libm: it declares fp64 angle precision.
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

#include "example_rope.h" /* example_pair */
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

/* theta_i = base^(-2i/d) for the base given (NTK kinds change the base, not the exponent). */
static double unscaled(double base, int i, int d) { return pow(base, -2.0 * i / d); }

/* The NTK base for the kinds that change it: static NTK always, dynamic NTK past L. */
static double ntk_base(const ropecheck_plugin_spec* s) {
  const double d = s->rotary_dim;
  if (s->rotary_dim == 2) return s->base; /* the only pair has exponent 0 */
  if (s->scaling_kind == ROPECHECK_SCALING_NTK) return s->base * pow(s->factor, d / (d - 2.0));
  if (s->scaling_kind == ROPECHECK_SCALING_DYNAMIC_NTK &&
      s->sequence_length > s->original_max_position) {
    const double grown =
        s->factor * (double)s->sequence_length / (double)s->original_max_position - (s->factor - 1.0);
    return s->base * pow(grown, d / (d - 2.0));
  }
  return s->base;
}

/* YaRN's correction dim: the pair index whose wavelength fits `rotations` times into L. */
static double yarn_dim(const ropecheck_plugin_spec* s, double rotations) {
  const double pi = 3.14159265358979323846;
  return s->rotary_dim * log((double)s->original_max_position / (rotations * 2.0 * pi)) /
         (2.0 * log(s->base));
}

static double yarn_theta(const ropecheck_plugin_spec* s, int i) {
  const double theta = unscaled(s->base, i, s->rotary_dim);
  double lo = yarn_dim(s, s->beta_fast), hi = yarn_dim(s, s->beta_slow);
  if (s->yarn_truncate) {
    lo = floor(lo);
    hi = ceil(hi);
  }
  if (lo < 0) lo = 0;
  if (hi > s->rotary_dim - 1) hi = s->rotary_dim - 1;
  const double width = hi == lo ? 0.001 : hi - lo;
  double ramp = (i - lo) / width;
  ramp = ramp < 0 ? 0 : ramp > 1 ? 1 : ramp;
  return theta / s->factor * ramp + theta * (1.0 - ramp);
}

static double llama3_theta(const ropecheck_plugin_spec* s, int i) {
  const double pi = 3.14159265358979323846;
  const double theta = unscaled(s->base, i, s->rotary_dim);
  const double old_context = (double)s->original_max_position;
  const double wavelength = 2.0 * pi / theta;
  if (wavelength < old_context / s->high_freq_factor) return theta;
  if (wavelength > old_context / s->low_freq_factor) return theta / s->factor;
  const double smooth =
      (old_context / wavelength - s->low_freq_factor) / (s->high_freq_factor - s->low_freq_factor);
#if defined(SCALED_LLAMA3_UNSMOOTHED)
  return smooth < 0.5 ? theta / s->factor : theta; /* BUG: the band snapped to its nearer end */
#else
  return (1.0 - smooth) * theta / s->factor + smooth * theta;
#endif
}

/* theta_i of pair i under the spec's scaling kind. */
static double scaled_theta(const ropecheck_plugin_spec* s, int i) {
  switch (s->scaling_kind) {
    case ROPECHECK_SCALING_LINEAR: return unscaled(s->base, i, s->rotary_dim) / s->factor;
    case ROPECHECK_SCALING_NTK:
    case ROPECHECK_SCALING_DYNAMIC_NTK: return unscaled(ntk_base(s), i, s->rotary_dim);
    case ROPECHECK_SCALING_YARN: return yarn_theta(s, i);
    case ROPECHECK_SCALING_LLAMA3: return llama3_theta(s, i);
    case ROPECHECK_SCALING_LONGROPE: {
      const double* ext =
          s->sequence_length > s->original_max_position ? s->long_factor : s->short_factor;
      return unscaled(s->base, i, s->rotary_dim) / ext[i];
    }
    default: return unscaled(s->base, i, s->rotary_dim);
  }
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
  caps->scaling_kinds = (1u << ROPECHECK_SCALING_LINEAR) | (1u << ROPECHECK_SCALING_NTK) |
                        (1u << ROPECHECK_SCALING_DYNAMIC_NTK) | (1u << ROPECHECK_SCALING_YARN) |
                        (1u << ROPECHECK_SCALING_LLAMA3) | (1u << ROPECHECK_SCALING_LONGROPE);
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
