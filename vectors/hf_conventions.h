// How a scaled golden case maps onto HF transformers, and where the readings of its parameters
// differ between transformers versions or other frameworks: the manifest's "hf_transformers" and
// "conventions" of each scaled case. A port of a long-context model fails most often here, not in
// the rotation: which sequence length dynamic NTK reads, which list LongRoPE picks at the switch,
// whether YaRN's attention factor multiplies cos/sin.
//   ropecheck vectors --out /tmp/golden && grep -A12 '"conventions": \[' /tmp/golden/manifest.json
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <span>

#include "core/spec.h"

namespace ropecheck {

// The HF config fields that reproduce `spec` with transformers' current rope functions:
// rope_theta, head_dim, partial_rotary_factor, max_position_embeddings (where a formula reads it),
// original_max_position_embeddings (LongRoPE: a top-level field, as Phi-3's config has it) and
// rope_scaling. Null for an unscaled spec.
nlohmann::ordered_json hf_transformers_json(const RopeSpec& spec);

// One entry per parameter whose reading differs somewhere: {"topic", "this_case" (the reading
// the case follows, with its numbers), "elsewhere" (the other readings and who uses them)}.
// `positions` are the case's: HF's current length is max(position_ids) + 1. Empty when unscaled.
nlohmann::ordered_json scaling_conventions_json(const RopeSpec& spec,
                                                std::span<const std::int64_t> positions);

}  // namespace ropecheck
