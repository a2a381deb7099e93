// Pinning the gate's bench processes to one CPU. Unpinned, a single-threaded bench process moved
// between the cores of a 2-core machine (and lost its private L1/L2 each time) whenever nothing
// else held the other core: in 16 A/A gates on an idle machine the 16-bit cases' ratio CV was
// 8-16% and 13 gates were INCONCLUSIVE, while beside a compile that kept the other core busy it
// was 4-7%; pinned to one CPU, the idle-machine A/A gates measured 1.3-7% (bench/README.md).
#pragma once

#include <optional>
#include <string>

namespace ropecheck {

// Pins this process, and so every process it starts afterwards, to one CPU: `wanted`, or when
// wanted < 0 the highest-numbered CPU this process may run on (CPU 0 tends to take more
// interrupts). Returns the CPU; nullopt with `why` set when it cannot (wanted not allowed, or
// the affinity calls fail), and then nothing is changed.
std::optional<int> pin_to_one_cpu(int wanted, std::string& why);

}  // namespace ropecheck
