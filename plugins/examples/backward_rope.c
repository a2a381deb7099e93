/* backward_rope: an ABI 4 plugin in plain C99, a training kernel's RoPE forward and backward, the
 * template for porting one. The rotate-half form, as Liger Kernel's Triton RoPE (its
 * BACKWARD_PASS branch) and TransformerEngine's fused RoPE (fused_rope_forward/_backward) state it
 * on HF's tables cos = a cos(m theta_i), sin = a sin(m theta_i) of each pair i, written here from
 * the maths:
 *   forward   y  = x * cos + rotate_half(x) * sin,   rotate_half(x1, x2) = (-x2, x1):
 *             y1 = x1 cos - x2 sin                    y2 = x2 cos + x1 sin
 *   backward  dx = dy * cos + rotate_half(dy) * (-sin): the same kernel with the sine negated,
 *             dx1 = dy1 cos + dy2 sin                 dx2 = dy2 cos - dy1 sin
 * since y = a R(m) x gives dx = a R(m)^T dy = a R(-m) dy; the attention factor a is in both
 * tables, so it multiplies the gradient too; the features past rotary_dim are copied by the
 * forward and their gradient passes through the backward unchanged. (x1, x2) is the pair
 * (i, i + rotary_dim/2) on the half-split layout (HF, Liger) and (2i, 2i+1) on the interleaved
 * one (TransformerEngine's interleaved=True). Every scaling kind (example_scaling.h), partial
 * rotary, GQA, fp32 q/k; each call's tokens split over call->threads POSIX threads (Liger runs one
 * program per token row). Tables in double: fp64 angles.
 *   build/ropecheck list --plugin build/plugins/backward_rope.so     # PASSES forward,backward
 *   build/ropecheck verify --plugin build/plugins/backward_rope.so   # the backward properties too
 * Built again with one backward bug each (tests/properties/backward_plugin_test.cc), the forward
 * right in every one:
 *   BACKWARD_BUG_SIN_NOT_FLIPPED  the backward runs the forward's kernel as is: R dy for R^T dy
 *   BACKWARD_BUG_FACTOR_DROPPED   the backward's tables without a: the gradient of R x, not a R x
 *   BACKWARD_BUG_TAIL_ZEROED      the gradient written into a zeroed buffer (torch.zeros_like(dy))
 *                                 over the rotary features only: the tail's gradient lost
 * and with BACKWARD_SHORT_STRUCT: an ABI 4 struct whose struct_size ends before apply_backward,
 * which the host must then never read (the forward only).
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "example_rope.h"    /* example_pair */
#include "example_scaling.h" /* example_scaled_theta: every kind's theta_i */
#include "ropecheck/plugin.h"

#if defined(BACKWARD_BUG_SIN_NOT_FLIPPED)
#define PLUGIN_NAME "backward_sin_not_flipped_rope"
#elif defined(BACKWARD_BUG_FACTOR_DROPPED)
#define PLUGIN_NAME "backward_factor_dropped_rope"
#elif defined(BACKWARD_BUG_TAIL_ZEROED)
#define PLUGIN_NAME "backward_tail_zeroed_rope"
#elif defined(BACKWARD_SHORT_STRUCT)
#define PLUGIN_NAME "backward_short_struct_rope"
#else
#define PLUGIN_NAME "backward_rope"
#endif

/* What differs between the two passes: one kernel runs both. */
typedef struct pass {
  double sin_sign; /* +1 forward, -1 backward (R^T is R with the sine negated) */
  double scale;    /* the attention factor a on cos and sin */
  int zero_tail;   /* the tail bug only */
} pass;

static pass forward_pass(const ropecheck_plugin_spec* s) {
  const pass p = {1.0, s->attention_factor, 0};
  return p;
}

static pass backward_pass(const ropecheck_plugin_spec* s) {
  pass p = {-1.0, s->attention_factor, 0};
#if defined(BACKWARD_BUG_SIN_NOT_FLIPPED)
  p.sin_sign = 1.0; /* BUG: "the backward is the forward kernel again" */
#endif
#if defined(BACKWARD_BUG_FACTOR_DROPPED)
  p.scale = 1.0; /* BUG: the tables rebuilt for the backward without the attention factor */
#endif
#if defined(BACKWARD_BUG_TAIL_ZEROED)
  p.zero_tail = 1; /* BUG: only the rotary features written into a zeroed gradient */
#endif
  return p;
}

/* One thread's share of a call: tokens [begin, end). */
typedef struct chunk {
  const ropecheck_plugin_call* call;
  const double* theta; /* rotary_dim/2 entries */
  pass p;
  int64_t begin, end;
} chunk;

/* x * cos + rotate_half(x) * (sin_sign * sin) on every head of one tensor, the chunk's tokens. */
static void rotate_rows(const chunk* w, float* x, int64_t heads) {
  const ropecheck_plugin_spec* s = w->call->spec;
  for (int64_t t = w->begin; t < w->end; ++t) {
    for (int i = 0; i < s->rotary_dim / 2; ++i) {
      const double angle = (double)w->call->positions[t] * w->theta[i];
      const double c = w->p.scale * cos(angle), sn = w->p.sin_sign * w->p.scale * sin(angle);
      int64_t a, b;
      example_pair(s, i, &a, &b);
      for (int64_t h = 0; h < heads; ++h) {
        float* row = x + (t * heads + h) * s->head_dim;
        const double x1 = row[a], x2 = row[b];
        row[a] = (float)(x1 * c - x2 * sn);
        row[b] = (float)(x2 * c + x1 * sn);
      }
    }
    if (!w->p.zero_tail) continue;
    for (int64_t h = 0; h < heads; ++h) {
      float* row = x + (t * heads + h) * s->head_dim;
      for (int f = s->rotary_dim; f < s->head_dim; ++f) row[f] = 0.0f;
    }
  }
}

static void* run_chunk(void* arg) {
  const chunk* w = arg;
  rotate_rows(w, w->call->q, w->call->q_heads);
  rotate_rows(w, w->call->k, w->call->k_heads);
  return NULL;
}

enum { kMaxThreads = 64 };

/* Either pass on the whole call: the frequency table once, then ceil(tokens / threads) tokens a
 * thread, the first chunk on the calling thread. */
static int32_t run(const ropecheck_plugin_call* call, pass p) {
  const ropecheck_plugin_spec* s = call->spec;
  if (call->dtype != ROPECHECK_DTYPE_FP32) return ROPECHECK_PLUGIN_UNSUPPORTED;
  double* theta = malloc(sizeof(double) * (size_t)(s->rotary_dim / 2));
  if (theta == NULL) return ROPECHECK_PLUGIN_ERROR;
  for (int i = 0; i < s->rotary_dim / 2; ++i) theta[i] = example_scaled_theta(s, i);
  const int threads = call->threads < 1 ? 1 : call->threads > kMaxThreads ? kMaxThreads : call->threads;
  const int64_t share = (call->tokens + threads - 1) / threads;
  chunk work[kMaxThreads];
  pthread_t team[kMaxThreads];
  int started[kMaxThreads] = {0};
  for (int j = 0; j < threads; ++j) {
    const int64_t begin = share * j < call->tokens ? share * j : call->tokens;
    const int64_t end = begin + share < call->tokens ? begin + share : call->tokens;
    work[j] = (chunk){call, theta, p, begin, end};
    /* A thread that cannot start has its chunk run here. */
    if (j > 0) started[j] = pthread_create(&team[j], NULL, run_chunk, &work[j]) == 0;
    if (j > 0 && !started[j]) run_chunk(&work[j]);
  }
  run_chunk(&work[0]);
  for (int j = 1; j < threads; ++j) {
    if (started[j]) pthread_join(team[j], NULL);
  }
  free(theta);
  return ROPECHECK_PLUGIN_OK;
}

static int32_t apply(void* opaque, const ropecheck_plugin_call* call) {
  (void)opaque;
  return run(call, forward_pass(call->spec));
}

static int32_t apply_backward(void* opaque, const ropecheck_plugin_call* call) {
  (void)opaque;
  return run(call, backward_pass(call->spec));
}

static int32_t init(const ropecheck_plugin_init_args* args, void** out) {
  *out = NULL;
  snprintf(args->description, args->description_bytes,
           "forward and backward, tokens split over up to %d threads", (int)args->max_threads);
  return ROPECHECK_PLUGIN_OK;
}

static int32_t query_capabilities(void* opaque, ropecheck_plugin_capabilities* caps) {
  (void)opaque;
  caps->layouts = (1u << ROPECHECK_LAYOUT_INTERLEAVED) | (1u << ROPECHECK_LAYOUT_HALF_SPLIT);
  caps->dtypes = ROPECHECK_DTYPE_FP32;
  caps->angle_precisions = 1u << ROPECHECK_ANGLES_FP64;
  caps->max_head_dim = 0;
  caps->partial_rotary = 1;
  caps->scaling_kinds = EXAMPLE_EVERY_SCALING_KIND;
  caps->axis_modes = 0; /* one position a token */
  caps->max_position = 0;
  return ROPECHECK_PLUGIN_OK;
}

static const ropecheck_plugin_v4 kPlugin = {
    ROPECHECK_PLUGIN_ABI_V4,
#if defined(BACKWARD_SHORT_STRUCT)
    offsetof(ropecheck_plugin_v4, apply_backward), /* the size of a struct without it */
#else
    sizeof(ropecheck_plugin_v4),
#endif
    PLUGIN_NAME,
    "example ABI 4 plugin: a training kernel's forward and backward (rotate-half form, the sine "
    "negated), every scaling kind, both layouts, partial rotary, GQA, threads, double angles",
    init,
    query_capabilities,
    apply,
    NULL, /* no teardown: init sets nothing up */
    apply_backward,
    {0, 0, 0},
};

ROPECHECK_PLUGIN_EXPORT const ropecheck_plugin_v4* ropecheck_plugin_entry(void) { return &kPlugin; }
