/* misbehaving_rope: plugins that break the host rather than the math, built once per
 * misbehaviour (CMake: plugin_crash_rope, plugin_hang_rope, plugin_overflow_rope,
 * plugin_unsupported_rope, plugin_wrong_abi_rope, plugin_fp16_null_rope) to test ropecheck's isolation: every one must
 * give FAILED (or SKIPPED, or exit 2 for the ABI) with the reason, never a dead ropecheck.
 *   MISBEHAVE_CRASH        apply writes through a wild pointer: SIGSEGV in the worker
 *   MISBEHAVE_HANG         apply never returns: killed after --plugin-timeout
 *   MISBEHAVE_HANG_ABOVE_64  correct up to head_dim 64, never returns above: HANG, reported once
 *   MISBEHAVE_OVERFLOW     rotates correctly, then writes one float past the end of q
 *   MISBEHAVE_UNSUPPORTED  declares every head_dim, returns UNSUPPORTED above 64
 *   MISBEHAVE_WRONG_ABI    claims ABI version 7 (this ropecheck speaks 1 to 6)
 *   MISBEHAVE_FP16_NULL    declares fp16 (beside fp32) but leaves apply_fp16 NULL: refused
 */
#define _POSIX_C_SOURCE 200809L /* pause() */

#include <math.h>
#include <stdint.h>
#include <unistd.h>

#include "example_rope.h" /* example_rotate_f32 */
#include "ropecheck/plugin.h"

#if defined(MISBEHAVE_CRASH)
#define PLUGIN_NAME "crash_rope"
#elif defined(MISBEHAVE_HANG)
#define PLUGIN_NAME "hang_rope"
#elif defined(MISBEHAVE_HANG_ABOVE_64)
#define PLUGIN_NAME "sometimes_hangs_rope"
#elif defined(MISBEHAVE_OVERFLOW)
#define PLUGIN_NAME "overflow_rope"
#elif defined(MISBEHAVE_UNSUPPORTED)
#define PLUGIN_NAME "unsupported_rope"
#elif defined(MISBEHAVE_WRONG_ABI)
#define PLUGIN_NAME "wrong_abi_rope"
#elif defined(MISBEHAVE_FP16_NULL)
#define PLUGIN_NAME "fp16_null_rope"
#else
#error "define one MISBEHAVE_* (see the header comment)"
#endif

#if defined(MISBEHAVE_WRONG_ABI)
#define PLUGIN_ABI 7u
#else
#define PLUGIN_ABI ROPECHECK_PLUGIN_ABI_VERSION
#endif

static int32_t apply_f32(const ropecheck_plugin_spec* spec, float* q, int64_t q_heads, float* k,
                         int64_t k_heads, const int64_t* positions, int64_t tokens) {
#if defined(MISBEHAVE_CRASH)
  /* A wild pointer (not null: a null store would be caught by UBSan builds before the fault). */
  volatile uintptr_t address = 64; /* volatile: the compiler must not see the constant */
  *(volatile float*)address = q[0];
#elif defined(MISBEHAVE_HANG)
  for (;;) pause(); /* a deadlock: waits for a wake-up that never comes */
#elif defined(MISBEHAVE_HANG_ABOVE_64)
  if (spec->head_dim > 64) {
    for (;;) pause(); /* a loop bound that never ends for long heads */
  }
#elif defined(MISBEHAVE_UNSUPPORTED)
  if (spec->head_dim > 64) return ROPECHECK_PLUGIN_UNSUPPORTED;
#endif
  example_rotate_f32(spec, q, q_heads, positions, tokens);
  example_rotate_f32(spec, k, k_heads, positions, tokens);
#if defined(MISBEHAVE_OVERFLOW)
  q[tokens * q_heads * spec->head_dim] = 1.0f; /* one float past the end of q */
#endif
  return ROPECHECK_PLUGIN_OK;
}

static int32_t query_capabilities(ropecheck_plugin_capabilities* caps) {
  caps->layouts = (1u << ROPECHECK_LAYOUT_INTERLEAVED) | (1u << ROPECHECK_LAYOUT_HALF_SPLIT);
#if defined(MISBEHAVE_FP16_NULL)
  caps->dtypes = ROPECHECK_DTYPE_FP32 | ROPECHECK_DTYPE_FP16; /* no apply_fp16 below */
#else
  caps->dtypes = ROPECHECK_DTYPE_FP32;
#endif
  caps->angle_precisions = 1u << ROPECHECK_ANGLES_FP64;
  caps->max_head_dim = 0;
  caps->partial_rotary = 1;
  return ROPECHECK_PLUGIN_OK;
}

static const ropecheck_plugin_v1 kPlugin = {
    PLUGIN_ABI,
    sizeof(ropecheck_plugin_v1),
    PLUGIN_NAME,
    "misbehaving example plugin (plugins/examples/misbehaving_rope.c)",
    query_capabilities,
    apply_f32,
    0, /* no bf16 */
    0, /* no fp16 */
    {0, 0, 0},
};

ROPECHECK_PLUGIN_EXPORT const ropecheck_plugin_v1* ropecheck_plugin_entry(void) { return &kPlugin; }
