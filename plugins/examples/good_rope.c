/* good_rope: a complete ropecheck plugin in plain C99, the template for porting a kernel.
 * Both layouts, partial rotary, GQA, fp32 q/k; angles m * theta_i formed in double and sin/cos
 * from libm, so it declares fp64 angle precision and is held to the fp64-angle bound.
 *   cmake --build build --target plugin_good_rope
 *   build/ropecheck verify --plugin build/plugins/good_rope.so    # passes every property
 */
#include <stdint.h>

#include "example_rope.h" /* example_angle, example_pair, example_rotate_f32 */
#include "ropecheck/plugin.h"

static int32_t apply_f32(const ropecheck_plugin_spec* spec, float* q, int64_t q_heads, float* k,
                         int64_t k_heads, const int64_t* positions, int64_t tokens) {
  if (spec->scaling_kind != 0) return ROPECHECK_PLUGIN_UNSUPPORTED; /* no frequency scaling */
  example_rotate_f32(spec, q, q_heads, positions, tokens);
  example_rotate_f32(spec, k, k_heads, positions, tokens); /* k_heads may differ (GQA) or be 0 */
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
