// The cycle estimate the counted gate judges (bench/format/counted_json.h's CycleModel):
//   cycles = Ir + l1_miss_cycles x (L1 misses served by the last level) + ll_miss_cycles x LL misses
// with the costs fitted to wall time on this project's own cases by scripts/calibrate-counted.py
// (gate/README.md, "The estimate", has the fit, the machine and how well it predicts: a median
// error of 19% over 19 cases, against 49% for instructions alone). The gate compares one case
// with itself, so what the costs decide is how much a change of misses weighs against a change of
// instructions.
#pragma once

#include "bench/format/counted_json.h"

namespace ropecheck {

inline constexpr CycleModel kCycleModel{.l1_miss_cycles = 10, .ll_miss_cycles = 65};

}  // namespace ropecheck
