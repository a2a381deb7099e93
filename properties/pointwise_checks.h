// The pointwise checks of one rotation that hold for either pass (spec.h, Pass): the forward's
// properties run them on R x (pointwise_properties.cc), the backward family on the gradient
// R^T dy (backward_properties.cc), with the same derived bounds: one rotation, transposed.
#pragma once

#include "core/spec.h"
#include "properties/property.h"

namespace ropecheck {

// Every element within the derived bound of the float64 oracle's result for the pass.
PropertyResult check_oracle_agreement(const Subject& subject, const RunConfig& config, Pass pass);
// Each rotary pair's norm times the attention factor, within the rounding bound.
PropertyResult check_norm_preservation(const Subject& subject, const RunConfig& config, Pass pass);
// Features past rotary_dim bit for bit as they came in (skipped without partial rotary).
PropertyResult check_tail_untouched(const Subject& subject, const RunConfig& config, Pass pass);

}  // namespace ropecheck
