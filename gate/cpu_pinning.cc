// pin_to_one_cpu() (cpu_pinning.h).
#include "gate/cpu_pinning.h"

#include <sched.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace ropecheck {

std::optional<int> pin_to_one_cpu(int wanted, std::string& why) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
    why = fmt::format("sched_getaffinity: {}", std::strerror(errno));
    return std::nullopt;
  }
  int cpu = wanted;
  if (cpu < 0) {
    for (int c = CPU_SETSIZE - 1; c >= 0 && cpu < 0; --c) {
      if (CPU_ISSET(c, &allowed)) cpu = c;
    }
  }
  if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed)) {
    why = fmt::format("CPU {} is not one this process may run on", wanted);
    return std::nullopt;
  }
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (sched_setaffinity(0, sizeof(one), &one) != 0) {
    why = fmt::format("sched_setaffinity to CPU {}: {}", cpu, std::strerror(errno));
    return std::nullopt;
  }
  return cpu;
}

}  // namespace ropecheck
