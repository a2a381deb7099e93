/* good_rope: a complete ropecheck plugin in plain C99, the template for porting a kernel.
 * Both layouts, partial rotary, GQA, fp32 q/k; angles m * theta_i formed in double and sin/cos
 * from libm, so it declares fp64 angle precision and is held to the fp64-angle bound.
 *   cmake --build build --target plugin_good_rope
 *   build/ropecheck verify --plugin build/plugins/good_rope.so    # passes every property
 */
#include <math.h>
#include <stdint.h>

#include "ropecheck/plugin.h"

/* Rotates every head of one tensor ([tokens][heads][head_dim]) in place. */
static void rotate(const ropecheck_plugin_spec* spec, float* x, int64_t heads,
                   const int64_t* positions, int64_t tokens) {
  const int64_t dim = spec->head_dim;
  const int pairs = spec->rotary_dim / 2;
  const int interleaved = spec->layout == ROPECHECK_LAYOUT_INTERLEAVED;
  for (int64_t t = 0; t < tokens; ++t) {
    for (int i = 0; i < pairs; ++i) {
      /* theta_i = base^(-2i / rotary_dim): the exponent uses rotary_dim (partial rotary as HF). */
      const double theta = pow(spec->base, -2.0 * i / spec->rotary_dim);
      const double angle = (double)positions[t] * theta;
      const double c = cos(angle), s = sin(angle);
      /* interleaved pairs (2i, 2i+1); half_split pairs (i, i + rotary_dim/2). */
      const int64_t a = interleaved ? 2 * i : i;
      const int64_t b = interleaved ? 2 * i + 1 : i + pairs;
      for (int64_t h = 0; h < heads; ++h) {
        float* row = x + (t * heads + h) * dim;
        const double xa = row[a], xb = row[b];
        /* In double, one rounding to float at the end: well inside the 2 eps32 bound. */
        row[a] = (float)(xa * c - xb * s);
        row[b] = (float)(xa * s + xb * c);
      }
    }
  }
  /* Features [rotary_dim, head_dim) are never touched: they pass through bit for bit. */
}

static int32_t apply_f32(const ropecheck_plugin_spec* spec, float* q, int64_t q_heads, float* k,
                         int64_t k_heads, const int64_t* positions, int64_t tokens) {
  if (spec->scaling_kind != 0) return ROPECHECK_PLUGIN_UNSUPPORTED; /* no frequency scaling */
  rotate(spec, q, q_heads, positions, tokens);
  rotate(spec, k, k_heads, positions, tokens); /* k_heads may differ (GQA) or be 0 */
  return ROPECHECK_PLUGIN_OK;
}

static int32_t query_capabilities(ropecheck_plugin_capabilities* caps) {
  caps->layouts = (1u << ROPECHECK_LAYOUT_INTERLEAVED) | (1u << ROPECHECK_LAYOUT_HALF_SPLIT);
  caps->dtypes = ROPECHECK_DTYPE_FP32;
  caps->angle_precisions = 1u << ROPECHECK_ANGLES_FP64; /* the product m * theta in double */
  caps->max_head_dim = 0;                               /* any even head_dim */
  caps->partial_rotary = 1;
  return ROPECHECK_PLUGIN_OK;
}

static const ropecheck_plugin_v1 kPlugin = {
    ROPECHECK_PLUGIN_ABI_VERSION,
    sizeof(ropecheck_plugin_v1),
    "good_rope",
    "example plugin: plain C, double angles, libm sin/cos, both layouts, partial rotary, GQA",
    query_capabilities,
    apply_f32,
    0, /* no bf16 */
    0, /* no fp16 */
    {0, 0, 0},
};

ROPECHECK_PLUGIN_EXPORT const ropecheck_plugin_v1* ropecheck_plugin_entry(void) { return &kPlugin; }
