// gate.json: everything one gate run measured and decided (schema "ropecheck.gate/4"), so that
// a CI job or a calibration script can read the verdicts, the per-round values and the settings.
#pragma once

#include <nlohmann/json.hpp>

#include "gate/gate_result.h"

namespace ropecheck {

inline constexpr const char* kGateSchemaId = "ropecheck.gate/4";

nlohmann::ordered_json gate_json(const GateResult& result);

}  // namespace ropecheck
