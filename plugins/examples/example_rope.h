/* example_rope.h: the RoPE arithmetic the example plugins share, in plain C99 against
 * ropecheck/plugin.h alone: theta_i and the angle in double, the pair of features a layout
 * rotates together, and the whole fp32 rotation of one tensor. good_rope.c is a complete plugin
 * with it; broken_rope.c, misbehaving_rope.c and fp16_rope.c each change one thing (a sign, the
 * host-facing behaviour, the storage). Copy this file with the example you start from.
 */
#ifndef ROPECHECK_EXAMPLE_ROPE_H
#define ROPECHECK_EXAMPLE_ROPE_H

#include <math.h>
#include <stdint.h>

#include "ropecheck/plugin.h"

/* m * theta_i in double, theta_i = base^(-2i / rotary_dim): the exponent uses rotary_dim (partial
 * rotary as HF forms it). Declared to the host as fp64 angle precision. */
static inline double example_angle(const ropecheck_plugin_spec* spec, int64_t position, int i) {
  return (double)position * pow(spec->base, -2.0 * i / spec->rotary_dim);
}

/* The features of pair i: interleaved (2i, 2i+1); half_split (i, i + rotary_dim/2). */
static inline void example_pair(const ropecheck_plugin_spec* spec, int i, int64_t* a, int64_t* b) {
  const int interleaved = spec->layout == ROPECHECK_LAYOUT_INTERLEAVED;
  *a = interleaved ? 2 * i : i;
  *b = interleaved ? 2 * i + 1 : i + spec->rotary_dim / 2;
}

/* Rotates every head of one fp32 tensor ([tokens][heads][head_dim]) in place. Each pair in
 * double, one rounding to float at the end: well inside the 2 eps32 bound. Features
 * [rotary_dim, head_dim) are never touched: they pass through bit for bit. */
static inline void example_rotate_f32(const ropecheck_plugin_spec* spec, float* x, int64_t heads,
                                      const int64_t* positions, int64_t tokens) {
  for (int64_t t = 0; t < tokens; ++t) {
    for (int i = 0; i < spec->rotary_dim / 2; ++i) {
      const double angle = example_angle(spec, positions[t], i);
      const double c = cos(angle), s = sin(angle);
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

#endif /* ROPECHECK_EXAMPLE_ROPE_H */
