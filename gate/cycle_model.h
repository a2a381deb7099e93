// The cycle estimate the counted gate judges (bench/format/counted_json.h's CycleModel):
//   cycles = Ir + l1_miss_cycles x (L1 misses served by the last level) + ll_miss_cycles x LL misses
// with the costs calibrated against wall time on this project's own counted cases
// (scripts/calibrate-counted.py; gate/README.md, "Calibration", has the fit, the machines and how
// well it predicts).
#pragma once

#include "bench/format/counted_json.h"

namespace ropecheck {

inline constexpr CycleModel kCycleModel{.l1_miss_cycles = 10, .ll_miss_cycles = 100};

}  // namespace ropecheck
