/* example_scaling.h: the scaled inverse frequencies theta_i of ABI 2's spec, every scaling kind
 * (linear, NTK, dynamic NTK, YaRN, Llama 3, LongRoPE), in double, in plain C99 against
 * ropecheck/plugin.h alone: the formulas at the top of plugin.h, one function each. scaled_rope.c
 * (the forward) and backward_rope.c (a training kernel's forward and backward) form their tables
 * with it. The attention factor is not here: the host resolves it (spec->attention_factor).
 * Copy this file with the example you start from.
 */
#ifndef ROPECHECK_EXAMPLE_SCALING_H
#define ROPECHECK_EXAMPLE_SCALING_H

#include <math.h>
#include <stdint.h>

#include "ropecheck/plugin.h"

/* theta_i = base^(-2i/d) for the base given (NTK kinds change the base, not the exponent). */
static inline double example_unscaled_theta(double base, int i, int d) { return pow(base, -2.0 * i / d); }

/* The NTK base for the kinds that change it: static NTK always, dynamic NTK past L. */
static inline double example_ntk_base(const ropecheck_plugin_spec* s) {
  const double d = s->rotary_dim;
  if (s->rotary_dim == 2) return s->base; /* the only pair has exponent 0 */
  if (s->scaling_kind == ROPECHECK_SCALING_NTK) return s->base * pow(s->factor, d / (d - 2.0));
  if (s->scaling_kind == ROPECHECK_SCALING_DYNAMIC_NTK &&
      s->sequence_length > s->original_max_position) {
    const double grown =
        s->factor * (double)s->sequence_length / (double)s->original_max_position - (s->factor - 1.0);
    return s->base * pow(grown, d / (d - 2.0));
  }
  return s->base;
}

/* YaRN's correction dim: the pair index whose wavelength fits `rotations` times into L. */
static inline double example_yarn_dim(const ropecheck_plugin_spec* s, double rotations) {
  const double pi = 3.14159265358979323846;
  return s->rotary_dim * log((double)s->original_max_position / (rotations * 2.0 * pi)) /
         (2.0 * log(s->base));
}

static inline double example_yarn_theta(const ropecheck_plugin_spec* s, int i) {
  const double theta = example_unscaled_theta(s->base, i, s->rotary_dim);
  double lo = example_yarn_dim(s, s->beta_fast), hi = example_yarn_dim(s, s->beta_slow);
  if (s->yarn_truncate) {
    lo = floor(lo);
    hi = ceil(hi);
  }
  if (lo < 0) lo = 0;
  if (hi > s->rotary_dim - 1) hi = s->rotary_dim - 1;
  const double width = hi == lo ? 0.001 : hi - lo;
  double ramp = (i - lo) / width;
  ramp = ramp < 0 ? 0 : ramp > 1 ? 1 : ramp;
  return theta / s->factor * ramp + theta * (1.0 - ramp);
}

/* Llama 3's smooth band between L / high_freq_factor and L / low_freq_factor, as a fraction:
 * 0 at the low-frequency end (theta / factor), 1 at the high one (theta). */
static inline double example_llama3_smooth(const ropecheck_plugin_spec* s, double wavelength) {
  return ((double)s->original_max_position / wavelength - s->low_freq_factor) /
         (s->high_freq_factor - s->low_freq_factor);
}

static inline double example_llama3_theta(const ropecheck_plugin_spec* s, int i) {
  const double pi = 3.14159265358979323846;
  const double theta = example_unscaled_theta(s->base, i, s->rotary_dim);
  const double old_context = (double)s->original_max_position;
  const double wavelength = 2.0 * pi / theta;
  if (wavelength < old_context / s->high_freq_factor) return theta;
  if (wavelength > old_context / s->low_freq_factor) return theta / s->factor;
  const double smooth = example_llama3_smooth(s, wavelength);
  return (1.0 - smooth) * theta / s->factor + smooth * theta;
}

/* theta_i of pair i under the spec's scaling kind. */
static inline double example_scaled_theta(const ropecheck_plugin_spec* s, int i) {
  switch (s->scaling_kind) {
    case ROPECHECK_SCALING_LINEAR: return example_unscaled_theta(s->base, i, s->rotary_dim) / s->factor;
    case ROPECHECK_SCALING_NTK:
    case ROPECHECK_SCALING_DYNAMIC_NTK: return example_unscaled_theta(example_ntk_base(s), i, s->rotary_dim);
    case ROPECHECK_SCALING_YARN: return example_yarn_theta(s, i);
    case ROPECHECK_SCALING_LLAMA3: return example_llama3_theta(s, i);
    case ROPECHECK_SCALING_LONGROPE: {
      const double* ext =
          s->sequence_length > s->original_max_position ? s->long_factor : s->short_factor;
      return example_unscaled_theta(s->base, i, s->rotary_dim) / ext[i];
    }
    default: return example_unscaled_theta(s->base, i, s->rotary_dim);
  }
}

/* Every scaling kind the ABI carries, as capabilities.scaling_kinds. */
#define EXAMPLE_EVERY_SCALING_KIND                                                               \
  ((1u << ROPECHECK_SCALING_LINEAR) | (1u << ROPECHECK_SCALING_NTK) |                          \
   (1u << ROPECHECK_SCALING_DYNAMIC_NTK) | (1u << ROPECHECK_SCALING_YARN) |                    \
   (1u << ROPECHECK_SCALING_LLAMA3) | (1u << ROPECHECK_SCALING_LONGROPE))

#endif /* ROPECHECK_EXAMPLE_SCALING_H */
