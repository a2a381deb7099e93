/* recurrence_rope: the angles of ggml's rope cache in plain C99 (ABI 1): theta_scale =
 * powf(base, -2/rotary_dim) once, then per token theta = (float)m and theta *= theta_scale pair by
 * pair, in float; cosf/sinf, the rotation in float. Its angle error grows with the pair index, so
 * it declares ROPECHECK_ANGLES_FP32_RECURRENCE and is held to that class's bound
 * (docs/tolerance.md). Built a second time with RECURRENCE_DECLARES_FP32 as
 * recurrence_as_fp32_rope: the same kernel declaring the more accurate fp32 class, which fails
 * oracle_agreement at high pair indices and large positions, by design.
 *   build/ropecheck verify --plugin build/plugins/recurrence_rope.so          # passes
 *   build/ropecheck verify --plugin build/plugins/recurrence_as_fp32_rope.so  # fails oracle_agreement
 */
#include <math.h>
#include <stdint.h>

#include "example_rope.h" /* example_pair */
#include "ropecheck/plugin.h"

static void rotate(const ropecheck_plugin_spec* spec, float* x, int64_t heads, const int64_t* positions,
                   int64_t tokens) {
  const float theta_scale = powf((float)spec->base, -2.0f / (float)spec->rotary_dim);
  for (int64_t t = 0; t < tokens; ++t) {
    float theta = (float)positions[t]; /* exact: |m| <= 2^24 */
    for (int i = 0; i < spec->rotary_dim / 2; ++i) {
      const float c = cosf(theta), s = sinf(theta);
      int64_t a, b;
      example_pair(spec, i, &a, &b);
      for (int64_t h = 0; h < heads; ++h) {
        float* row = x + (t * heads + h) * spec->head_dim;
        const float xa = row[a], xb = row[b];
        row[a] = xa * c - xb * s;
        row[b] = xa * s + xb * c;
      }
      theta *= theta_scale;
    }
  }
}

static int32_t apply_f32(const ropecheck_plugin_spec* spec, float* q, int64_t q_heads, float* k,
                         int64_t k_heads, const int64_t* positions, int64_t tokens) {
  rotate(spec, q, q_heads, positions, tokens);
  rotate(spec, k, k_heads, positions, tokens);
  return ROPECHECK_PLUGIN_OK;
}

static int32_t query_capabilities(ropecheck_plugin_capabilities* caps) {
  caps->layouts = (1u << ROPECHECK_LAYOUT_INTERLEAVED) | (1u << ROPECHECK_LAYOUT_HALF_SPLIT);
  caps->dtypes = ROPECHECK_DTYPE_FP32;
#ifdef RECURRENCE_DECLARES_FP32
  caps->angle_precisions = 1u << ROPECHECK_ANGLES_FP32; /* wrong: more accurate than it is */
#else
  caps->angle_precisions = 1u << ROPECHECK_ANGLES_FP32_RECURRENCE;
#endif
  caps->max_head_dim = 0;
  caps->partial_rotary = 1;
  return ROPECHECK_PLUGIN_OK;
}

static const ropecheck_plugin_v1 kPlugin = {
    ROPECHECK_PLUGIN_ABI_VERSION,
    sizeof(ropecheck_plugin_v1),
#ifdef RECURRENCE_DECLARES_FP32
    "recurrence_as_fp32_rope",
    "example plugin: ggml's theta *= theta_scale angles, declared as fp32 angles (wrongly)",
#else
    "recurrence_rope",
    "example plugin: ggml's theta *= theta_scale angles in float, declared as such",
#endif
    query_capabilities,
    apply_f32,
    0,
    0,
    {0, 0, 0},
};

ROPECHECK_PLUGIN_EXPORT const ropecheck_plugin_v1* ropecheck_plugin_entry(void) { return &kPlugin; }
