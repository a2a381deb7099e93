/* outside_rope: the kernel of plugins/examples/outside-project, an ABI 2 plugin in the fewest
 * lines that pass every property: fp32, both layouts, partial rotary, GQA, unscaled, the angle
 * m * theta_i in double and sin/cos from libm (fp64 angle precision). OUTSIDE_ROPE_BROKEN flips
 * the sine's sign, the bug its registered test must catch. */
#include <math.h>
#include <stdint.h>

#include "ropecheck/plugin.h"

#if defined(OUTSIDE_ROPE_BROKEN)
#define SIN_SIGN -1.0
#else
#define SIN_SIGN 1.0
#endif

static void rotate(const ropecheck_plugin_spec* s, float* x, int64_t heads, const int64_t* positions,
                   int64_t tokens) {
  const int half = s->rotary_dim / 2;
  for (int64_t t = 0; t < tokens; ++t) {
    for (int i = 0; i < half; ++i) {
      const double angle = (double)positions[t] * pow(s->base, -2.0 * i / s->rotary_dim);
      const double c = cos(angle), sn = SIN_SIGN * sin(angle);
      const int a = s->layout == ROPECHECK_LAYOUT_INTERLEAVED ? 2 * i : i;
      const int b = s->layout == ROPECHECK_LAYOUT_INTERLEAVED ? 2 * i + 1 : i + half;
      for (int64_t h = 0; h < heads; ++h) {
        float* row = x + (t * heads + h) * s->head_dim;
        const double xa = row[a], xb = row[b];
        row[a] = (float)(xa * c - xb * sn);
        row[b] = (float)(xa * sn + xb * c);
      }
    }
  }
}

static int32_t query_capabilities(void* context, ropecheck_plugin_capabilities* caps) {
  (void)context;
  caps->layouts = (1u << ROPECHECK_LAYOUT_INTERLEAVED) | (1u << ROPECHECK_LAYOUT_HALF_SPLIT);
  caps->dtypes = ROPECHECK_DTYPE_FP32;
  caps->angle_precisions = 1u << ROPECHECK_ANGLES_FP64;
  caps->partial_rotary = 1;
  return ROPECHECK_PLUGIN_OK;
}

static int32_t apply(void* context, const ropecheck_plugin_call* call) {
  (void)context;
  if (call->dtype != ROPECHECK_DTYPE_FP32) return ROPECHECK_PLUGIN_UNSUPPORTED;
  rotate(call->spec, call->q, call->q_heads, call->positions, call->tokens);
  rotate(call->spec, call->k, call->k_heads, call->positions, call->tokens);
  return ROPECHECK_PLUGIN_OK;
}

static const ropecheck_plugin_v2 kPlugin = {
    ROPECHECK_PLUGIN_ABI_V2, sizeof(ropecheck_plugin_v2), "outside_rope",
    "the outside project's kernel (plugins/examples/outside-project)",
    0 /* init */, query_capabilities, apply, 0 /* teardown */, {0, 0, 0, 0},
};

ROPECHECK_PLUGIN_EXPORT const ropecheck_plugin_v2* ropecheck_plugin_entry(void) { return &kPlugin; }
