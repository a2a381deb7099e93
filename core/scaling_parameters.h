// Which parameters of a RopeScaling each kind reads (scaling.h has the formulas); the others mean
// nothing for that kind. The plugin ABI sets only these (and zero for the rest) and the golden
// vectors' manifest writes only these: one table, so that the two cannot disagree.
#pragma once

#include "core/scaling.h"

namespace ropecheck {

struct ScalingParameters {
  bool factor = false;
  bool original_max_position = false;
  bool sequence_length = false;
  bool yarn_ramp = false;         // beta_fast, beta_slow, truncate
  // mscale, mscale_all_dim, where set (the plugin ABI has no field for them: it gets the
  // attention factor they resolve to)
  bool yarn_mscale = false;
  bool llama3_band = false;       // low_freq_factor, high_freq_factor
  bool longrope_factors = false;  // short_factor, long_factor
};

constexpr ScalingParameters parameters_read_by(ScalingKind kind) {
  switch (kind) {
    case ScalingKind::none: return {};
    case ScalingKind::linear:
    case ScalingKind::ntk: return {.factor = true};
    case ScalingKind::dynamic_ntk:
      return {.factor = true, .original_max_position = true, .sequence_length = true};
    case ScalingKind::yarn:
      return {.factor = true, .original_max_position = true, .yarn_ramp = true, .yarn_mscale = true};
    case ScalingKind::llama3:
      return {.factor = true, .original_max_position = true, .llama3_band = true};
    case ScalingKind::longrope:
      return {.factor = true, .original_max_position = true, .sequence_length = true,
              .longrope_factors = true};
  }
  return {};
}

}  // namespace ropecheck
