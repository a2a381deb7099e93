// The machine a result came from, as recorded in verify.json: the CPU model and the ISA flags
// that decide which implementations can run here (read from /proc/cpuinfo on Linux).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ropecheck {

struct MachineInfo {
  std::string cpu_model;                            // "unknown" when it cannot be read
  std::vector<std::pair<std::string, bool>> flags;  // each flag of interest, present or not
  int logical_cpus = 0;                             // processors listed; 0 when unknown
};

// The flags of interest, in the order they are reported.
const std::vector<std::string>& cpu_flags_of_interest();

// Parses the text of /proc/cpuinfo (the first processor's model name and flags).
MachineInfo parse_cpuinfo(const std::string& cpuinfo);
// This machine's; never throws (a missing /proc/cpuinfo gives "unknown" and no flags set).
MachineInfo this_machine();

// The CPUs this process may run on (its affinity mask: a container's or taskset's share), >= 1.
int usable_cpus();

}  // namespace ropecheck
