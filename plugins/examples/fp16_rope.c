/* fp16_rope: a plugin on fp16 storage only, in plain C99: q and k are IEEE binary16 bit patterns
 * (uint16_t), widened to float, rotated, and rounded back to half once. It declares only
 * ROPECHECK_DTYPE_FP16, so ropecheck judges it as fp16 storage: the properties' tensors are
 * rounded to fp16 before apply_fp16 and the bound has fp16's rounding term (2^-11 relative, or
 * 2^-25 absolute under 2^-14). Both layouts, partial rotary, GQA; angles in double (fp64).
 *   cmake --build build --target plugin_fp16_rope
 *   build/ropecheck verify --plugin build/plugins/fp16_rope.so    # passes every property
 *
 * The conversions are the part a port gets wrong, so they are spelled out portably (no _Float16,
 * no F16C): the narrowing rounds to nearest even and keeps subnormals, as vcvtps2ph does.
 * Built with FP16_TRUNCATING it is fp16_truncating_rope instead, whose narrowing is the "fast"
 * bit shift of hand-written ports (truncates towards zero, flushes subnormals to zero): up to a
 * whole fp16 ulp of error where the bound allows half of one, so oracle_agreement FAILS it.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "example_rope.h" /* example_angle, example_pair */
#include "ropecheck/plugin.h"

#if defined(FP16_TRUNCATING)
#define PLUGIN_NAME "fp16_truncating_rope"
#define PLUGIN_SUMMARY "example plugin with a bug: fp16 narrowing truncates and flushes subnormals"
#else
#define PLUGIN_NAME "fp16_rope"
#define PLUGIN_SUMMARY \
  "example plugin: plain C, fp16 storage only (portable RNE conversion), double angles"
#endif

/* binary16 -> float: exact (every half is a float). */
static float float_from_half(uint16_t half) {
  const uint32_t sign = (uint32_t)(half & 0x8000u) << 16;
  const uint32_t exponent = (half >> 10) & 0x1Fu;
  const uint32_t mantissa = half & 0x3FFu;
  uint32_t bits;
  float value;
  if (exponent == 0x1Fu) {
    bits = sign | 0x7F800000u | (mantissa << 13); /* Inf, or NaN with its payload */
  } else if (exponent != 0) {
    bits = sign | ((exponent + 127u - 15u) << 23) | (mantissa << 13); /* rebias 15 -> 127 */
  } else {
    /* Zero or subnormal: mantissa * 2^-24, exact in float (at most 10 significant bits). */
    value = (float)mantissa * 0x1p-24f;
    memcpy(&bits, &value, sizeof bits);
    bits |= sign;
  }
  memcpy(&value, &bits, sizeof value);
  return value;
}

#if !defined(FP16_TRUNCATING)
/* float -> binary16, rounded to nearest, ties to even; subnormal results kept. In integers so
 * that neither the FPU's rounding mode nor excess precision (x87) can change a result. */
static uint16_t half_from_float(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  const uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) { /* NaN: stays a quiet NaN, top 10 payload bits kept */
    return (uint16_t)(sign | 0x7E00u | ((magnitude >> 13) & 0x3FFu));
  }
  /* 65520 is halfway between 65504 (the largest half) and 65536: it and all above round to Inf. */
  if (magnitude >= 0x477FF000u) return (uint16_t)(sign | 0x7C00u);
  if (magnitude >= 0x38800000u) { /* >= 2^-14: a normal half */
    /* Drop 13 of float's 23 mantissa bits: add just under half of the dropped unit, plus the
     * kept lowest bit so that an exact half goes to the even neighbour. A carry out of the
     * mantissa bumps the exponent, which is the right result (up to 65504 by the check above). */
    const uint32_t odd = (magnitude >> 13) & 1u;
    const uint32_t rounded = (magnitude + 0xFFFu + odd) >> 13;
    return (uint16_t)(sign | (rounded - ((127u - 15u) << 10))); /* rebias 127 -> 15 */
  }
  {
    /* Under 2^-14: a subnormal half, a multiple of 2^-24. value = significand * 2^(e - 150), so
     * in units of 2^-24 it is significand >> (126 - e), rounded to nearest even. Under 2^-25
     * (e < 102) everything rounds to zero; 2^-25 itself is a tie, and goes to the even 0. */
    const uint32_t exponent = magnitude >> 23;
    uint32_t significand, shift, remainder, halfway, units;
    if (exponent < 102u) return sign;
    significand = (magnitude & 0x7FFFFFu) | 0x800000u;
    shift = 126u - exponent; /* 14 .. 24 */
    remainder = significand & ((1u << shift) - 1u);
    halfway = 1u << (shift - 1u);
    units = significand >> shift;
    if (remainder > halfway || (remainder == halfway && (units & 1u) != 0)) ++units;
    return (uint16_t)(sign | units); /* units may reach 0x400: 2^-14, the smallest normal */
  }
}
#else
/* THE BUG: the exponent rebiased and the mantissa shifted right, no rounding (towards zero), and
 * anything under 2^-14 flushed to zero. Fine for values in range, wrong in their last bit. */
static uint16_t half_from_float(float value) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof bits);
  const uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude < 0x38800000u) return sign;
  return (uint16_t)(sign | ((magnitude >> 13) - ((127u - 15u) << 10)));
}
#endif

/* Rotates every head of one fp16 tensor ([tokens][heads][head_dim]) in place. */
static void rotate(const ropecheck_plugin_spec* spec, uint16_t* x, int64_t heads,
                   const int64_t* positions, int64_t tokens) {
  for (int64_t t = 0; t < tokens; ++t) {
    for (int i = 0; i < spec->rotary_dim / 2; ++i) {
      const double angle = example_angle(spec, positions[t], i);
      const double c = cos(angle), s = sin(angle);
      int64_t a, b;
      example_pair(spec, i, &a, &b);
      for (int64_t h = 0; h < heads; ++h) {
        uint16_t* row = x + (t * heads + h) * spec->head_dim;
        const double xa = float_from_half(row[a]), xb = float_from_half(row[b]);
        /* In double, then to float (half an fp32 ulp, inside the fp64-angle terms of the bound),
         * then to half: the one storage rounding the fp16 term of the bound allows. */
        row[a] = half_from_float((float)(xa * c - xb * s));
        row[b] = half_from_float((float)(xa * s + xb * c));
      }
    }
  }
  /* Features [rotary_dim, head_dim) are never touched: they pass through bit for bit. */
}

static int32_t apply_fp16(const ropecheck_plugin_spec* spec, uint16_t* q, int64_t q_heads,
                          uint16_t* k, int64_t k_heads, const int64_t* positions, int64_t tokens) {
  if (spec->scaling_kind != 0) return ROPECHECK_PLUGIN_UNSUPPORTED; /* no frequency scaling */
  rotate(spec, q, q_heads, positions, tokens);
  rotate(spec, k, k_heads, positions, tokens); /* k_heads may differ (GQA) or be 0 */
  return ROPECHECK_PLUGIN_OK;
}

static int32_t query_capabilities(ropecheck_plugin_capabilities* caps) {
  caps->layouts = (1u << ROPECHECK_LAYOUT_INTERLEAVED) | (1u << ROPECHECK_LAYOUT_HALF_SPLIT);
  caps->dtypes = ROPECHECK_DTYPE_FP16; /* fp16 only: judged as fp16 storage */
  caps->angle_precisions = 1u << ROPECHECK_ANGLES_FP64;
  caps->max_head_dim = 0;
  caps->partial_rotary = 1;
  return ROPECHECK_PLUGIN_OK;
}

static const ropecheck_plugin_v1 kPlugin = {
    ROPECHECK_PLUGIN_ABI_VERSION,
    sizeof(ropecheck_plugin_v1),
    PLUGIN_NAME,
    PLUGIN_SUMMARY,
    query_capabilities,
    0, /* no fp32 */
    0, /* no bf16 */
    apply_fp16,
    {0, 0, 0},
};

ROPECHECK_PLUGIN_EXPORT const ropecheck_plugin_v1* ropecheck_plugin_entry(void) { return &kPlugin; }
