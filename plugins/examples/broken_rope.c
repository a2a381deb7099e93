/* broken_rope: good_rope.c with one real porting bug, to show what `verify --plugin` reports:
 * on the half_split layout the sin term's sign is swapped (a rotate_half written as
 * cat(x2, -x1) instead of cat(-x2, x1)), so NeoX-style models rotate by -m theta. Interleaved is
 * right, which is why such a bug survives a test on one layout. ropecheck exits 1 with a shrunk
 * counterexample (half_split, a nonzero position).
 *   build/ropecheck verify --plugin build/plugins/broken_rope.so --property oracle_agreement
 */
#include <math.h>
#include <stdint.h>

#include "example_rope.h" /* example_angle, example_pair */
#include "ropecheck/plugin.h"

static void rotate(const ropecheck_plugin_spec* spec, float* x, int64_t heads,
                   const int64_t* positions, int64_t tokens) {
  const int interleaved = spec->layout == ROPECHECK_LAYOUT_INTERLEAVED;
  for (int64_t t = 0; t < tokens; ++t) {
    for (int i = 0; i < spec->rotary_dim / 2; ++i) {
      const double angle = example_angle(spec, positions[t], i);
      /* THE BUG: half_split takes sin with the wrong sign. */
      const double c = cos(angle), s = interleaved ? sin(angle) : -sin(angle);
      int64_t a, b;
      example_pair(spec, i, &a, &b);
      for (int64_t h = 0; h < heads; ++h) {
        float* row = x + (t * heads + h) * spec->head_dim;
        const double xa = row[a], xb = row[b];
        row[a] = (float)(xa * c - xb * s);
        row[b] = (float)(xa * s + xb * c);
      }
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
  caps->angle_precisions = 1u << ROPECHECK_ANGLES_FP64;
  caps->max_head_dim = 0;
  caps->partial_rotary = 1;
  return ROPECHECK_PLUGIN_OK;
}

static const ropecheck_plugin_v1 kPlugin = {
    ROPECHECK_PLUGIN_ABI_VERSION,
    sizeof(ropecheck_plugin_v1),
    "broken_rope",
    "example plugin with a bug: half_split rotates by -m theta (sin sign swapped)",
    query_capabilities,
    apply_f32,
    0, /* no bf16 */
    0, /* no fp16 */
    {0, 0, 0},
};

ROPECHECK_PLUGIN_EXPORT const ropecheck_plugin_v1* ropecheck_plugin_entry(void) { return &kPlugin; }
