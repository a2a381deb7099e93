/* neon_rope: a complete ropecheck plugin (ABI 1, as good_rope.c) whose rotation is a hand-written
 * aarch64 NEON kernel, the template for porting an ARM one: fp32, both layouts, partial rotary,
 * GQA, four pairs a vector and a scalar tail; angles in double (declared fp64). Cross-build it,
 * then verify it with an aarch64 build of ropecheck (cmake --preset aarch64) under QEMU:
 *   aarch64-linux-gnu-gcc -shared -fPIC -O2 neon_rope.c -o neon_rope.so -lm
 *   qemu-aarch64-static build-aarch64/ropecheck verify --plugin ./neon_rope.so   # passes
 */
#if !defined(__aarch64__)
#error "neon_rope.c is an aarch64 NEON kernel: build it with an aarch64 compiler"
#endif

#include <arm_neon.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "ropecheck/plugin.h"

/* Built again with NEON_BUG_LANE_ORDER (neon_rope_lane_order, for the tests only): the
 * interleaved store's zip1 and zip2 halves swapped, pairs i, i+1 given pairs i+2, i+3's results. */
#if defined(NEON_BUG_LANE_ORDER)
#define PLUGIN_NAME "neon_rope_lane_order"
#else
#define PLUGIN_NAME "neon_rope"
#endif

/* One pair rotated in fp32 exactly as a vector lane does it (a product, then a fused
 * multiply-add): the scalar tail's results are the lanes' bit for bit. */
static inline void rotate_pair(float* a, float* b, float c, float s) {
  const float x = *a, y = *b;
  *a = fmaf(-y, s, x * c);
  *b = fmaf(y, c, x * s);
}

/* Rotates one head's first rotary_dim features in place with the token's tables cs[0..half) (cos)
 * and sn[0..half) (sin); features [rotary_dim, head_dim) are never read or written. */
static void rotate_row(float* row, int interleaved, int half, const float* cs, const float* sn) {
  int i = 0;
  if (interleaved) {
    /* Pairs (2i, 2i+1): eight floats x0 y0 x1 y1 x2 y2 x3 y3 hold pairs i..i+3. uzp1/uzp2
     * deinterleave them into x0..x3 and y0..y3 (what vld2q_f32 does in the load), zip1/zip2
     * interleave the results back (vst2q_f32 in the store): zip1 gives pairs i, i+1 (the first
     * four floats), zip2 pairs i+2, i+3. */
    for (; i + 4 <= half; i += 4) {
      float* p = row + 2 * i;
      const float32x4_t lo = vld1q_f32(p), hi = vld1q_f32(p + 4);
      const float32x4_t x = vuzp1q_f32(lo, hi), y = vuzp2q_f32(lo, hi);
      const float32x4_t c = vld1q_f32(cs + i), s = vld1q_f32(sn + i);
      const float32x4_t rx = vfmsq_f32(vmulq_f32(x, c), y, s); /* x c - y s */
      const float32x4_t ry = vfmaq_f32(vmulq_f32(x, s), y, c); /* x s + y c */
#if defined(NEON_BUG_LANE_ORDER)
      vst1q_f32(p, vzip2q_f32(rx, ry)); /* the bug: the halves swapped */
      vst1q_f32(p + 4, vzip1q_f32(rx, ry));
#else
      vst1q_f32(p, vzip1q_f32(rx, ry));
      vst1q_f32(p + 4, vzip2q_f32(rx, ry));
#endif
    }
    for (; i < half; ++i) rotate_pair(&row[2 * i], &row[2 * i + 1], cs[i], sn[i]);
  } else {
    /* Pairs (i, i + half): x and y are two contiguous runs, no lanes to reorder. */
    for (; i + 4 <= half; i += 4) {
      const float32x4_t x = vld1q_f32(row + i), y = vld1q_f32(row + half + i);
      const float32x4_t c = vld1q_f32(cs + i), s = vld1q_f32(sn + i);
      vst1q_f32(row + i, vfmsq_f32(vmulq_f32(x, c), y, s));
      vst1q_f32(row + half + i, vfmaq_f32(vmulq_f32(x, s), y, c));
    }
    for (; i < half; ++i) rotate_pair(&row[i], &row[half + i], cs[i], sn[i]);
  }
}

static int32_t apply_f32(const ropecheck_plugin_spec* spec, float* q, int64_t q_heads, float* k,
                         int64_t k_heads, const int64_t* positions, int64_t tokens) {
  if (spec->scaling_kind != 0) return ROPECHECK_PLUGIN_UNSUPPORTED; /* no frequency scaling */
  const int half = spec->rotary_dim / 2;
  const int interleaved = spec->layout == ROPECHECK_LAYOUT_INTERLEAVED;
  /* theta_i = base^(-2i / rotary_dim) in double once per call; a token's cos/sin tables in float. */
  double* theta = malloc(sizeof(double) * (size_t)half);
  float* cs = malloc(sizeof(float) * 2 * (size_t)half);
  if (theta == NULL || cs == NULL) {
    free(theta);
    free(cs);
    return ROPECHECK_PLUGIN_ERROR;
  }
  float* sn = cs + half;
  for (int i = 0; i < half; ++i) theta[i] = pow(spec->base, -2.0 * i / spec->rotary_dim);
  for (int64_t t = 0; t < tokens; ++t) {
    for (int i = 0; i < half; ++i) {
      const double angle = (double)positions[t] * theta[i]; /* m * theta_i in double: fp64 angles */
      cs[i] = (float)cos(angle);
      sn[i] = (float)sin(angle);
    }
    for (int64_t h = 0; h < q_heads; ++h) {
      rotate_row(q + (t * q_heads + h) * spec->head_dim, interleaved, half, cs, sn);
    }
    for (int64_t h = 0; h < k_heads; ++h) { /* k_heads may differ (GQA) or be 0 */
      rotate_row(k + (t * k_heads + h) * spec->head_dim, interleaved, half, cs, sn);
    }
  }
  free(theta);
  free(cs);
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
    PLUGIN_NAME,
    "example plugin: aarch64 NEON fp32 kernel, double angles, both layouts, partial rotary, GQA",
    query_capabilities,
    apply_f32,
    0, /* no bf16 */
    0, /* no fp16 */
    {0, 0, 0},
};

ROPECHECK_PLUGIN_EXPORT const ropecheck_plugin_v1* ropecheck_plugin_entry(void) { return &kPlugin; }
