// accuracy.json: what the report plots about accuracy, computed from the implementations and the
// oracle, not from a benchmark. "ropecheck.accuracy/1":
//   error_vs_position: per implementation (and angle precision it implements), for positions
//     2^k, k = 0..24, the worst error against the oracle in eps32*|pair| units and as a
//     fraction of the implementation's own bound (tolerance.h): flat for angles formed in double,
//     growing like |m theta| for angles formed in fp32.
//   decay: seed 004's ones-vector score envelope for d = 64, 128, 256 (base 10000), with the
//     seed's bound and the long_range_decay verdict.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

namespace ropecheck {

inline constexpr const char* kAccuracySchemaId = "ropecheck.accuracy/1";

nlohmann::ordered_json accuracy_json();

}  // namespace ropecheck
