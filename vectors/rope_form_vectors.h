// The files and manifest entry of one call form golden case (rope_form_golden_cases.h), written
// by `ropecheck vectors` beside the RoPE and fused cases.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>

#include "vectors/rope_form_golden_cases.h"

namespace ropecheck {

// Writes DIR/<case>/: the buffer before the call, positions, theta, the QK-norm's weights, the
// cos/sin cache, per view the oracle's rows in float64 (normalized and rotated) and each row
// element's bound, and the whole buffer after the call rounded once to the storage; returns the
// case's manifest entry and adds the bytes written to `bytes`.
nlohmann::ordered_json write_rope_form_case(const GoldenRopeFormCase& c, const std::filesystem::path& out_dir,
                                            std::uintmax_t& bytes);

}  // namespace ropecheck
