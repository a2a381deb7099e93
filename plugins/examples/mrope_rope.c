/* mrope_rope: an ABI 3 plugin in plain C99, a port of the multi-axis RoPE of vision-language models
 * as HF transformers writes it, the template for porting one:
 *   MROPE   Qwen2-VL's apply_multimodal_rotary_pos_emb: cos and sin formed for each axis (t, h, w)
 *           over the whole rotary_dim (emb = cat(freqs, freqs)), then cut by
 *           cos.split(mrope_section * 2), chunk j taken from axis j % 3
 *   IMROPE  Qwen3-VL's apply_interleaved_mrope: the pair frequencies of t, with the pairs
 *           offset 1 (h) and 2 (w), stepping by 3 up to 3 * section, taken from that axis
 *   VISION  Qwen2-VL's vision tower: VisionRotaryEmbedding's frequencies indexed by a patch's row
 *           and its column, concatenated (each section restarts them), then doubled like the rest
 * and one axis (NONE) as 1D RoPE. Both layouts: half_split is HF's rotate_half on the doubled
 * tables; interleaved rotates pair (2i, 2i+1) by the first half of them, as interleaved ports do.
 * Partial rotary, GQA, fp32 q/k, no frequency scaling; angles, cos and sin in double (fp64).
 *   build/ropecheck list --plugin build/plugins/mrope_rope.so
 *   build/ropecheck verify --plugin build/plugins/mrope_rope.so    # passes every property
 * Built again with one port bug each (tests/properties/mrope_plugin_test.cc):
 *   MROPE_BUG_BOUNDARY   the split's chunk ends compared with > where >= belongs: the first
 *                        feature of every chunk stays with the chunk before it
 *   MROPE_BUG_SWAPPED_HW the h and w positions read from each other's place
 *   MROPE_BUG_INTERLEAVE Qwen3-VL's slices started one pair early: h at i mod 3 = 0, w at 1
 *   MROPE_BUG_UNDOUBLED  cos.split(mrope_section) without the * 2: the three sections cut the
 *                        rotary_dim features, the last stretched over the rest (half_split only:
 *                        the second half, all of it w, rotates by other angles than the first)
 * and with MROPE_AS_ABI2: the same source loaded as an ABI 2 plugin (its declared axis modes in
 * what ABI 2 reserves), which returns ERROR unless the host keeps ABI 2's promises (one position
 * a token, call->axes 0, the spec of ABI 2's size).
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ropecheck/plugin.h"

#if defined(MROPE_BUG_BOUNDARY)
#define PLUGIN_NAME "mrope_boundary_rope"
#elif defined(MROPE_BUG_SWAPPED_HW)
#define PLUGIN_NAME "mrope_swapped_hw_rope"
#elif defined(MROPE_BUG_INTERLEAVE)
#define PLUGIN_NAME "imrope_offset_rope"
#elif defined(MROPE_BUG_UNDOUBLED)
#define PLUGIN_NAME "mrope_undoubled_rope"
#elif defined(MROPE_AS_ABI2)
#define PLUGIN_NAME "mrope_as_abi2_rope"
#else
#define PLUGIN_NAME "mrope_rope"
#endif

#if defined(MROPE_AS_ABI2)
#define PLUGIN_ABI ROPECHECK_PLUGIN_ABI_V2
#else
#define PLUGIN_ABI ROPECHECK_PLUGIN_ABI_V3
#endif

#if !defined(MROPE_AS_ABI2)
/* Positions per token for the spec's mode (plugin.h): t, h, w; row, column; or one. */
static int axes_of(const ropecheck_plugin_spec* s) {
  switch (s->axis_mode) {
    case ROPECHECK_AXES_MROPE:
    case ROPECHECK_AXES_IMROPE: return 3;
    case ROPECHECK_AXES_VISION: return 2;
    default: return 1;
  }
}
#endif

/* The position of `axis` for token t (HF's position_ids[axis][t]). */
static int64_t position_of(const int64_t* positions, int axes, int64_t t, int axis) {
#if defined(MROPE_BUG_SWAPPED_HW)
  if (axes == 3 && axis != 0) axis = 3 - axis; /* BUG: h read from w's place and w from h's */
#endif
  return positions[t * axes + axis];
}

/* inv_freq[i] = base^(-2i / dim) (HF: 1 / base ** (arange(0, dim, 2) / dim)). */
static double inv_freq(double base, int i, int dim) { return pow(base, -2.0 * i / dim); }

/* The angle of pair i (0 <= i < rotary_dim/2) for the t, h, w positions p: HF's freqs before
 * the cat, for IMROPE, VISION and one axis. */
static double pair_angle(const ropecheck_plugin_spec* s, const int64_t* p, int i) {
  const int d = s->rotary_dim;
  if (s->axis_mode == ROPECHECK_AXES_VISION) {
    /* cat(rotary_pos_emb_full[row], rotary_pos_emb_full[column]): each restarts at frequency 0,
     * VisionRotaryEmbedding(head_dim / 2)'s frequencies having exponent 2j / (rotary_dim / 2). */
    const int row = i < s->sections[0];
    return (double)p[row ? 0 : 1] * inv_freq(s->base, row ? i : i - s->sections[0], d / 2);
  }
  if (s->axis_mode == ROPECHECK_AXES_IMROPE) {
    /* freqs_t = freqs[0]; freqs_t[..., offset:section*3:3] = freqs[dim][..., offset:section*3:3] */
    int axis = 0;
    for (int dim = 1; dim <= 2; ++dim) {
#if defined(MROPE_BUG_INTERLEAVE)
      const int offset = dim - 1; /* BUG: the slices start one pair early */
#else
      const int offset = dim;
#endif
      if (i % 3 == offset % 3 && i >= offset && i < s->sections[dim] * 3) axis = dim;
    }
    return (double)p[axis] * inv_freq(s->base, i, d);
  }
  return (double)p[0] * inv_freq(s->base, i, d);
}

/* Qwen2-VL's cut of the doubled tables: features [0, rotary_dim) into chunks of
 * mrope_section * 2 = (s0, s1, s2, s0, s1, s2), chunk j from axis j % 3. The axis of feature f. */
static int split_axis(const ropecheck_plugin_spec* s, int f) {
#if defined(MROPE_BUG_UNDOUBLED)
  /* BUG: cos.split(mrope_section): three chunks, the last one taking whatever is left. */
  const int sizes[6] = {s->sections[0], s->sections[1], s->rotary_dim, 0, 0, 0};
#else
  const int sizes[6] = {s->sections[0], s->sections[1], s->sections[2],
                        s->sections[0], s->sections[1], s->sections[2]};
#endif
  int chunk = 0, end = sizes[0];
#if defined(MROPE_BUG_BOUNDARY)
  while (f > end && chunk < 5) end += sizes[++chunk]; /* BUG: f == end belongs to the next chunk */
#else
  while (f >= end && chunk < 5) end += sizes[++chunk];
#endif
  return chunk % 3;
}

/* The doubled tables of token t, HF's cos and sin: angle[f] for every feature f < rotary_dim. */
static void feature_angles(const ropecheck_plugin_spec* s, const int64_t* p, double* angle) {
  const int half = s->rotary_dim / 2;
  for (int f = 0; f < s->rotary_dim; ++f) {
    if (s->axis_mode == ROPECHECK_AXES_MROPE) {
      /* Each axis's emb = cat(freqs, freqs): feature f of axis a is pair f mod half's angle. */
      angle[f] = (double)p[split_axis(s, f)] * inv_freq(s->base, f % half, s->rotary_dim);
    } else {
      angle[f] = pair_angle(s, p, f % half); /* emb = cat(freqs, freqs) */
    }
  }
}

/* q * cos + rotate_half(q) * sin on every head of one tensor, rotate_half(x) = cat(-x2, x1). */
static void rotate(const ropecheck_plugin_spec* s, const double* c, const double* sn, float* x,
                   int64_t heads, int64_t t) {
  const int half = s->rotary_dim / 2;
  for (int64_t h = 0; h < heads; ++h) {
    float* row = x + (t * heads + h) * s->head_dim;
    for (int i = 0; i < half; ++i) {
      if (s->layout == ROPECHECK_LAYOUT_HALF_SPLIT) {
        const double x1 = row[i], x2 = row[i + half];
        row[i] = (float)(x1 * c[i] - x2 * sn[i]);
        row[i + half] = (float)(x2 * c[i + half] + x1 * sn[i + half]);
      } else { /* pair (2i, 2i+1) by the first half of the tables */
        const double x1 = row[2 * i], x2 = row[2 * i + 1];
        row[2 * i] = (float)(x1 * c[i] - x2 * sn[i]);
        row[2 * i + 1] = (float)(x2 * c[i] + x1 * sn[i]);
      }
    }
  }
}

static int32_t query_capabilities(void* opaque, ropecheck_plugin_capabilities* caps) {
  (void)opaque;
  caps->layouts = (1u << ROPECHECK_LAYOUT_INTERLEAVED) | (1u << ROPECHECK_LAYOUT_HALF_SPLIT);
  caps->dtypes = ROPECHECK_DTYPE_FP32;
  caps->angle_precisions = 1u << ROPECHECK_ANGLES_FP64;
  caps->max_head_dim = 0;
  caps->partial_rotary = 1;
  caps->scaling_kinds = 0; /* none besides ROPECHECK_SCALING_NONE */
  caps->axis_modes = (1u << ROPECHECK_AXES_MROPE) | (1u << ROPECHECK_AXES_IMROPE) |
                     (1u << ROPECHECK_AXES_VISION);
  caps->max_position = 0;
  return ROPECHECK_PLUGIN_OK;
}

static int32_t apply(void* opaque, const ropecheck_plugin_call* call) {
  (void)opaque;
  const ropecheck_plugin_spec* s = call->spec;
  if (call->dtype != ROPECHECK_DTYPE_FP32) return ROPECHECK_PLUGIN_UNSUPPORTED;
#if defined(MROPE_AS_ABI2)
  /* ABI 2's promises: call->axes was reserved (zero), the spec ends before axis_mode. */
  if (call->axes != 0 || s->struct_size != offsetof(ropecheck_plugin_spec, axis_mode)) {
    return ROPECHECK_PLUGIN_ERROR;
  }
  /* Nothing past struct_size is read: the fields ABI 2 has, the axes zero (one axis). */
  ropecheck_plugin_spec abi2 = {0};
  memcpy(&abi2, s, s->struct_size);
  s = &abi2;
  const int axes = 1;
#else
  /* Fields this plugin reads past ABI 2: a host that does not fill them is not one to trust. */
  if (s->struct_size < sizeof *s || call->axes != axes_of(s)) return ROPECHECK_PLUGIN_ERROR;
  const int axes = call->axes;
#endif
  double* table = malloc(sizeof(double) * 3 * (size_t)s->rotary_dim);
  if (table == NULL) return ROPECHECK_PLUGIN_ERROR;
  double *angle = table, *c = table + s->rotary_dim, *sn = table + 2 * s->rotary_dim;
  for (int64_t t = 0; t < call->tokens; ++t) {
    int64_t p[3] = {0, 0, 0};
    for (int a = 0; a < axes; ++a) p[a] = position_of(call->positions, axes, t, a);
    feature_angles(s, p, angle);
    for (int f = 0; f < s->rotary_dim; ++f) {
      c[f] = cos(angle[f]);
      sn[f] = sin(angle[f]);
    }
    rotate(s, c, sn, (float*)call->q, call->q_heads, t);
    rotate(s, c, sn, (float*)call->k, call->k_heads, t);
  }
  free(table);
  return ROPECHECK_PLUGIN_OK;
}

static const ropecheck_plugin_v2 kPlugin = {
    PLUGIN_ABI,
    sizeof(ropecheck_plugin_v2),
    PLUGIN_NAME,
    "example ABI 3 plugin: Qwen2-VL MRoPE, Qwen3-VL interleaved MRoPE and the 2D vision RoPE as HF "
    "transformers forms them, double angles",
    NULL, /* no init: nothing to set up */
    query_capabilities,
    apply,
    NULL, /* no teardown */
    {0, 0, 0, 0},
};

ROPECHECK_PLUGIN_EXPORT const ropecheck_plugin_v2* ropecheck_plugin_entry(void) { return &kPlugin; }
