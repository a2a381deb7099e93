// The RoPE properties, one function each; rope_properties.cc lists them with their ids and
// descriptions. Each runs RapidCheck through check_property() (rapidcheck_bridge.h).
#pragma once

#include "properties/property.h"

namespace ropecheck {

PropertyResult oracle_agreement(const Subject& subject, const RunConfig& config);
PropertyResult norm_preservation(const Subject& subject, const RunConfig& config);
PropertyResult identity_at_zero(const Subject& subject, const RunConfig& config);
PropertyResult tail_untouched(const Subject& subject, const RunConfig& config);
PropertyResult inverse(const Subject& subject, const RunConfig& config);
PropertyResult composition(const Subject& subject, const RunConfig& config);
PropertyResult relative_position(const Subject& subject, const RunConfig& config);
PropertyResult layout_equivalence(const Subject& subject, const RunConfig& config);
PropertyResult linear_scaling_interpolates(const Subject& subject, const RunConfig& config);
PropertyResult scaling_boundary(const Subject& subject, const RunConfig& config);
PropertyResult long_range_decay_property(const Subject& subject, const RunConfig& config);

}  // namespace ropecheck
