// The parts of the golden vectors' manifest.json ("ropecheck.vectors/1") that do not depend on
// the files written: the generator, the conventions, and each dtype's recommended tolerance with
// its derivation, taken from core/tolerance.h (numbers and text together).
//   ropecheck vectors --out /tmp/golden && python3 -m json.tool /tmp/golden/manifest.json
#pragma once

#include <nlohmann/json.hpp>

#include "core/storage.h"

namespace ropecheck {

inline constexpr const char* kVectorsFormat = "ropecheck.vectors/1";

// {format, generator, conventions}: the top of manifest.json, before "cases".
nlohmann::ordered_json vectors_manifest_head();

// The tolerance a RoPE port storing `dtype` should meet against the float64 expected values:
// rotation_bound_units (rounding, storage, fp64_angles total, fp32_angles_per_radian), the
// formula and the derivation, in units of eps32 * max(|(x_a, x_b)|, pair_norm_floor): the floor
// is fp16's smallest normal 2^-14 for fp16 (tolerance.h's unit_pair_norm with a = 1).
nlohmann::ordered_json rope_tolerance_json(StorageType dtype);

// The same for an fp32 sinusoidal table, in units of eps32 (absolute).
nlohmann::ordered_json sinusoidal_tolerance_json();

}  // namespace ropecheck
