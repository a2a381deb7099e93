/* threaded_rope: an ABI 2 plugin that splits each call's tokens over call->threads POSIX threads,
 * the way a real CPU kernel does (ggml's ceil(tokens / threads) rows each, the last chunk shorter),
 * in plain C99 against ropecheck/plugin.h alone. The arithmetic is example_rope.h's (double angles,
 * no frequency scaling). verify draws every thread count from 1 to --plugin-threads and reaches
 * the real model shapes, so the paths a kernel switches at are judged too.
 *   build/ropecheck verify --plugin build/plugins/threaded_rope.so --plugin-threads 4
 * Built again with one path bug each (tests/properties/plugin_test.cc, PluginPathMutants):
 *   PATH_BUG_SPLIT    floor(tokens / threads) each: the last tokens % threads never rotated
 *   PATH_BUG_REMAINDER  the same floor split, the last chunk one token longer when any are left:
 *                     right up to 2 threads, wrong where tokens % threads >= 2 (3 threads on)
 *   PATH_BUG_PREFILL  calls of >= 16384 rows in 64-token tiles whose angles come from the tile's
 *                     first position: wrong where a packed sequence restarts inside a tile
 *   PATH_BUG_WIDE     heads wider than 128 with the frequencies of a head half as wide
 *   PATH_BUG_LONG     a row cache of 65536 positions, indexed modulo its size
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "example_rope.h"
#include "ropecheck/plugin.h"

#if defined(PATH_BUG_SPLIT)
#define PLUGIN_NAME "threaded_split_floor_rope"
#elif defined(PATH_BUG_REMAINDER)
#define PLUGIN_NAME "threaded_split_remainder_rope"
#elif defined(PATH_BUG_PREFILL)
#define PLUGIN_NAME "threaded_prefill_tile_rope"
#elif defined(PATH_BUG_WIDE)
#define PLUGIN_NAME "threaded_wide_head_rope"
#elif defined(PATH_BUG_LONG)
#define PLUGIN_NAME "threaded_long_context_rope"
#else
#define PLUGIN_NAME "threaded_rope"
#endif

/* One thread's share of a call. */
typedef struct chunk {
  const ropecheck_plugin_call* call;
  int64_t begin, end; /* tokens */
} chunk;

/* The position a token is rotated by (the path bugs change it). */
static int64_t position_of(const ropecheck_plugin_call* call, int64_t t) {
#if defined(PATH_BUG_PREFILL)
  if (call->tokens * call->q_heads >= 16384) {
    const int64_t first = t / 64 * 64;
    return call->positions[first] + (t - first); /* BUG: assumes contiguous positions */
  }
#endif
#if defined(PATH_BUG_LONG)
  if (call->positions[t] > 65535) return call->positions[t] & 0xffff; /* BUG: the cache's row */
#endif
  return call->positions[t];
}

/* theta_i's exponent's denominator (the path bug halves it for wide heads). */
static int frequency_dim(const ropecheck_plugin_spec* s) {
#if defined(PATH_BUG_WIDE)
  if (s->head_dim > 128) return s->rotary_dim / 2; /* BUG: a narrow head's frequencies */
#endif
  return s->rotary_dim;
}

static void rotate_tokens(const ropecheck_plugin_call* call, float* x, int64_t heads, int64_t begin,
                          int64_t end) {
  const ropecheck_plugin_spec* s = call->spec;
  for (int64_t t = begin; t < end; ++t) {
    const int64_t m = position_of(call, t);
    for (int i = 0; i < s->rotary_dim / 2; ++i) {
      const double angle = (double)m * pow(s->base, -2.0 * i / frequency_dim(s));
      const double c = cos(angle), sn = sin(angle);
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

static void* run_chunk(void* arg) {
  const chunk* work = arg;
  rotate_tokens(work->call, work->call->q, work->call->q_heads, work->begin, work->end);
  rotate_tokens(work->call, work->call->k, work->call->k_heads, work->begin, work->end);
  return NULL;
}

static int32_t init(const ropecheck_plugin_init_args* args, void** out) {
  *out = NULL;
  snprintf(args->description, args->description_bytes, "tokens split over up to %d threads",
           (int)args->max_threads);
  return ROPECHECK_PLUGIN_OK;
}

static void teardown(void* opaque) { (void)opaque; }

static int32_t query_capabilities(void* opaque, ropecheck_plugin_capabilities* caps) {
  (void)opaque;
  caps->layouts = (1u << ROPECHECK_LAYOUT_INTERLEAVED) | (1u << ROPECHECK_LAYOUT_HALF_SPLIT);
  caps->dtypes = ROPECHECK_DTYPE_FP32;
  caps->angle_precisions = 1u << ROPECHECK_ANGLES_FP64;
  caps->max_head_dim = 0;
  caps->partial_rotary = 1;
  caps->scaling_kinds = 0; /* none besides ROPECHECK_SCALING_NONE */
  caps->max_position = 0;
  return ROPECHECK_PLUGIN_OK;
}

enum { kMaxThreads = 64 };

static int32_t apply(void* opaque, const ropecheck_plugin_call* call) {
  (void)opaque;
  if (call->dtype != ROPECHECK_DTYPE_FP32) return ROPECHECK_PLUGIN_UNSUPPORTED;
  const int threads = call->threads < 1 ? 1 : call->threads > kMaxThreads ? kMaxThreads : call->threads;
#if defined(PATH_BUG_SPLIT) || defined(PATH_BUG_REMAINDER)
  const int64_t share = call->tokens / threads; /* BUG: floor; ceil covers every token */
#else
  const int64_t share = (call->tokens + threads - 1) / threads;
#endif
  chunk work[kMaxThreads];
  pthread_t team[kMaxThreads];
  int joined[kMaxThreads] = {0};
  for (int j = 0; j < threads; ++j) {
    int64_t begin = share * j, end = begin + share;
#if defined(PATH_BUG_REMAINDER)
    if (j == threads - 1 && call->tokens % threads != 0) ++end; /* BUG: "a remainder of one" */
#endif
    if (begin > call->tokens) begin = call->tokens;
    if (end > call->tokens) end = call->tokens;
    work[j] = (chunk){call, begin, end};
    /* Chunk 0 is the calling thread's; a thread that cannot start has its chunk run here. */
    if (j > 0) joined[j] = pthread_create(&team[j], NULL, run_chunk, &work[j]) == 0;
    if (j > 0 && !joined[j]) run_chunk(&work[j]);
  }
  run_chunk(&work[0]);
  for (int j = 1; j < threads; ++j) {
    if (joined[j]) pthread_join(team[j], NULL);
  }
  return ROPECHECK_PLUGIN_OK;
}

static const ropecheck_plugin_v2 kPlugin = {
    ROPECHECK_PLUGIN_ABI_V2,
    sizeof(ropecheck_plugin_v2),
    PLUGIN_NAME,
    "example ABI 2 plugin: each call's tokens split over call->threads POSIX threads, double angles",
    init,
    query_capabilities,
    apply,
    teardown,
    {0, 0, 0, 0},
};

ROPECHECK_PLUGIN_EXPORT const ropecheck_plugin_v2* ropecheck_plugin_entry(void) { return &kPlugin; }
