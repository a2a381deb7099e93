// The machine a result came from, as recorded in verify.json and bench.json: the CPU model and
// the ISA flags that decide which implementations can run here (read from /proc/cpuinfo on
// Linux; on aarch64 the flags from the kernel's hardware capabilities), and whether this process
// runs under user-mode emulation (an aarch64 build under qemu-aarch64 on an x86-64 host), where
// no timing is the machine's.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ropecheck {

enum class Architecture { x86_64, aarch64, other };

// The architecture this binary was built for.
Architecture build_architecture();
std::string_view to_string(Architecture architecture);

struct MachineInfo {
  // "unknown" when it cannot be read; under emulation "aarch64 under emulation on <host model>"
  std::string cpu_model;
  std::vector<std::pair<std::string, bool>> flags;  // each flag of interest, present or not
  int logical_cpus = 0;                             // processors listed; 0 when unknown
  // Empty natively; under emulation, the host CPU this process is emulated on ("AMD EPYC"): QEMU's
  // user mode passes the host's /proc/cpuinfo through, so an aarch64 build that reads an x86
  // CPU's there is not on an aarch64 CPU. Its timings are the emulator's.
  std::string emulated_on;
};

// The flags of interest for the architecture, in the order they are reported.
const std::vector<std::string>& cpu_flags_of_interest(Architecture architecture = build_architecture());

// Parses the text of /proc/cpuinfo as a build for `architecture` reads it: the first processor's
// model (x86: "model name"; aarch64: its implementer and part, named where known) and flags
// (x86: "flags"; aarch64: "Features").
MachineInfo parse_cpuinfo(const std::string& cpuinfo, Architecture architecture = build_architecture());
// This machine's; never throws (a missing /proc/cpuinfo gives "unknown" and no flags set).
MachineInfo this_machine();

// The CPUs this process may run on (its affinity mask: a container's or taskset's share), >= 1.
int usable_cpus();

}  // namespace ropecheck
