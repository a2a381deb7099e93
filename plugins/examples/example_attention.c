/* example_attention: a complete attention plugin (ropecheck/attention_plugin.h) in plain C99: the
 * textbook softmax(q k^T / sqrt(d)) v per head, in double, K and V kept as given (fp32). Built
 * once correct and once per misbehaviour (CMake), for tests/plugins/attention_plugin_test.cc:
 *   (none)                 correct: every attention property passes
 *   ATTENTION_UNSUPPORTED  returns UNSUPPORTED above head_dim 64: those properties are SKIPPED
 *   ATTENTION_ERROR        returns ERROR for 5 tokens or more: FAILED, with the call named
 *   ATTENTION_BAD_KV       declares K and V in bf16, which the ABI has no bound for: refused
 * Its context remembers the process that made it, and attend fails in any other: ropecheck must
 * init a plugin in every process that calls it (verify's workers are forks).
 *   ropecheck verify --plugin build/plugins/example_attention.so
 */
#define _POSIX_C_SOURCE 200809L /* getpid */

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "ropecheck/attention_plugin.h"

#if defined(ATTENTION_UNSUPPORTED)
#define PLUGIN_NAME "unsupported_attention"
#elif defined(ATTENTION_ERROR)
#define PLUGIN_NAME "error_attention"
#elif defined(ATTENTION_BAD_KV)
#define PLUGIN_NAME "bad_kv_attention"
#else
#define PLUGIN_NAME "example_attention"
#endif

typedef struct {
  pid_t pid; /* the process init ran in */
} context_t;

static int32_t init(const ropecheck_plugin_init_args* args, void** context) {
  context_t* c = malloc(sizeof *c);
  (void)args;
  if (c == NULL) return ROPECHECK_PLUGIN_ERROR;
  c->pid = getpid();
  *context = c;
  return ROPECHECK_PLUGIN_OK;
}

static void teardown(void* context) { free(context); }

static int32_t query_capabilities(void* context, ropecheck_attention_capabilities* caps) {
  (void)context;
#if defined(ATTENTION_BAD_KV)
  caps->kv_dtype = ROPECHECK_DTYPE_BF16;
#else
  caps->kv_dtype = ROPECHECK_DTYPE_FP32;
#endif
  caps->max_head_dim = 0;
  return ROPECHECK_PLUGIN_OK;
}

static int32_t attend(void* context, const ropecheck_attention_call* call) {
  const int64_t t = call->tokens, heads = call->q_heads, kv_heads = call->kv_heads, d = call->head_dim;
  const double scale = 1.0 / sqrt((double)d);
  double* p;
  int64_t h, i, j, c;
  if (((const context_t*)context)->pid != getpid()) return ROPECHECK_PLUGIN_ERROR; /* another's context */
#if defined(ATTENTION_UNSUPPORTED)
  if (d > 64) return ROPECHECK_PLUGIN_UNSUPPORTED;
#elif defined(ATTENTION_ERROR)
  if (t >= 5) return ROPECHECK_PLUGIN_ERROR;
#endif
  p = malloc((size_t)t * sizeof *p);
  if (p == NULL) return ROPECHECK_PLUGIN_ERROR;
  for (h = 0; h < heads; ++h) {
    const int64_t kvh = h / (heads / kv_heads);
    for (i = 0; i < t; ++i) {
      const float* q = call->q + (i * heads + h) * d;
      const int64_t visible = call->causal ? i + 1 : t;
      double max = -INFINITY, sum = 0;
      for (j = 0; j < visible; ++j) {
        const float* k = call->k + (j * kv_heads + kvh) * d;
        double dot = 0;
        for (c = 0; c < d; ++c) dot += (double)q[c] * k[c];
        p[j] = dot * scale;
        if (p[j] > max) max = p[j];
      }
      for (j = 0; j < visible; ++j) sum += (p[j] = exp(p[j] - max));
      for (c = 0; c < d; ++c) {
        double o = 0;
        for (j = 0; j < visible; ++j) o += p[j] * call->v[(j * kv_heads + kvh) * d + c];
        call->out[(i * heads + h) * d + c] = (float)(o / sum);
      }
    }
  }
  free(p);
  return ROPECHECK_PLUGIN_OK;
}

static const ropecheck_attention_plugin_v1 plugin = {
    ROPECHECK_ATTENTION_PLUGIN_ABI_V1, sizeof(ropecheck_attention_plugin_v1), PLUGIN_NAME,
    "textbook softmax(q k^T / sqrt(d)) v in double, K and V as given (an example attention plugin)",
    init, query_capabilities, attend, teardown, {0, 0, 0, 0}};

ROPECHECK_PLUGIN_EXPORT const ropecheck_attention_plugin_v1* ropecheck_attention_plugin_entry(void) {
  return &plugin;
}
