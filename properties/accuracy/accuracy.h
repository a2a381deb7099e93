// accuracy.json: what the report plots about accuracy, computed from the implementations and the
// oracle, not from a benchmark. "ropecheck.accuracy/1":
//   error_vs_position: per implementation (and angle precision it implements), for positions
//     2^k, k = 0..24, the worst error against the oracle in eps32*|pair| units, as a fraction
//     of the implementation's own bound (tolerance.h) and of the accurate (fp64-angle) bound:
//     flat for angles formed in double, growing like |m theta| for angles formed in fp32; and
//     the largest position up to which it stays within the accurate bound.
//   shift_invariance: <R_c q, R_(c+3) k> against the exact <q, R_3 k> for shifts c = 2^k up to
//     2^24, and the largest shift up to which it holds within two accurate rotations' bound.
//   decay: seed 004's ones-vector score envelope for d = 64, 128, 256 (base 10000), with the
//     seed's bound and the long_range_decay verdict.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>
#include <vector>

#include "impls/rope_impl.h"

namespace ropecheck {

inline constexpr const char* kAccuracySchemaId = "ropecheck.accuracy/1";

// Every available registry implementation, then `extra` (plugins, e.g. the PyTorch peers).
nlohmann::ordered_json accuracy_json(const std::vector<const RopeImpl*>& extra = {});

}  // namespace ropecheck
