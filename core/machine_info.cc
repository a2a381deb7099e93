// MachineInfo from /proc/cpuinfo: "key<tabs>: value" lines, one block per logical processor.
// Recorded as "machine" in verify.json; tested in tests/cli/cli_test.cc (CliLibrary.ParseCpuinfo*).
#include "core/machine_info.h"

#include <fmt/format.h>
#include <sched.h>

#if defined(__aarch64__)
#include <sys/auxv.h>
#endif

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string_view>

namespace ropecheck {
namespace {

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

// An aarch64 core's name from its MIDR fields, as /proc/cpuinfo gives them ("0x41", "0xd40"):
// the server and laptop cores ropecheck's users run; others by their numbers.
std::string arm_core_name(const std::string& implementer, const std::string& part) {
  static const std::map<std::pair<std::string, std::string>, std::string_view> kCores = {
      {{"0x41", "0xd0c"}, "ARM Neoverse-N1"}, {{"0x41", "0xd40"}, "ARM Neoverse-V1"},
      {{"0x41", "0xd49"}, "ARM Neoverse-N2"}, {{"0x41", "0xd4f"}, "ARM Neoverse-V2"},
      {{"0x41", "0xd84"}, "ARM Neoverse-V3"}, {{"0x41", "0xd8e"}, "ARM Neoverse-N3"},
      {{"0x41", "0xd0b"}, "ARM Cortex-A76"},  {{"0x41", "0xd41"}, "ARM Cortex-A78"},
      {{"0x41", "0xd44"}, "ARM Cortex-X1"},   {{"0x41", "0xd4e"}, "ARM Cortex-X3"},
      {{"0x46", "0x001"}, "Fujitsu A64FX"},   {{"0xc0", "0xac3"}, "Ampere-1"},
      {{"0x48", "0xd01"}, "HiSilicon TaiShan-v110"}};
  const auto known = kCores.find({implementer, part});
  const std::string name = known != kCores.end()       ? std::string(known->second)
                           : implementer == "0x61"      ? std::string("Apple")
                                                        : std::string("aarch64 CPU");
  return fmt::format("{} (implementer {} part {})", name, implementer, part);
}

}  // namespace

Architecture build_architecture() {
#if defined(__x86_64__)
  return Architecture::x86_64;
#elif defined(__aarch64__)
  return Architecture::aarch64;
#else
  return Architecture::other;
#endif
}

std::string_view to_string(Architecture architecture) {
  switch (architecture) {
    case Architecture::x86_64: return "x86-64";
    case Architecture::aarch64: return "aarch64";
    case Architecture::other: break;
  }
  return "other";
}

const std::vector<std::string>& cpu_flags_of_interest(Architecture architecture) {
  static const std::vector<std::string> x86 = {"avx2", "avx512f", "avx512bw", "avx512vl", "avx512_bf16"};
  // Linux's names (/proc/cpuinfo's Features, HWCAP): Advanced SIMD, its fp16 arithmetic, SVE,
  // SVE2, and the BF16 and int8 matrix extensions.
  static const std::vector<std::string> arm = {"asimd", "asimdhp", "sve", "sve2", "bf16", "i8mm"};
  static const std::vector<std::string> none;
  return architecture == Architecture::x86_64 ? x86 : architecture == Architecture::aarch64 ? arm : none;
}

MachineInfo parse_cpuinfo(const std::string& cpuinfo, Architecture architecture) {
  MachineInfo info;
  std::set<std::string, std::less<>> present;
  std::string x86_model, implementer, part;
  bool have_flags = false, x86_host = false;
  std::istringstream lines(cpuinfo);
  for (std::string line; std::getline(lines, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto key = trim(std::string_view(line).substr(0, colon));
    const auto value = trim(std::string_view(line).substr(colon + 1));
    if (key == "processor") {
      ++info.logical_cpus;
    } else if (key == "model name" && x86_model.empty()) {
      x86_model = std::string(value);
    } else if (key == "vendor_id") {
      x86_host = true;
    } else if (key == "CPU implementer" && implementer.empty()) {
      implementer = std::string(value);
    } else if (key == "CPU part" && part.empty()) {
      part = std::string(value);
    } else if ((key == "flags" || key == "Features") && !have_flags) {
      x86_host = x86_host || key == "flags";
      std::istringstream words{std::string(value)};
      for (std::string word; words >> word;) present.insert(word);
      have_flags = true;
    }
  }
  if (architecture == Architecture::aarch64 && implementer.empty() && x86_host) {
    // QEMU's user mode: the host's cpuinfo. Its flags are not this process's (this_machine() reads
    // the emulated CPU's from the hardware capabilities).
    info.emulated_on = x86_model.empty() ? "an x86-64 host" : x86_model;
    info.cpu_model = fmt::format("aarch64 under emulation on {}", info.emulated_on);
    present.clear();
  } else if (!implementer.empty()) {
    info.cpu_model = arm_core_name(implementer, part);
  } else {
    info.cpu_model = x86_model;
  }
  if (info.cpu_model.empty()) info.cpu_model = "unknown";
  for (const auto& flag : cpu_flags_of_interest(architecture)) {
    info.flags.emplace_back(flag, present.contains(flag));
  }
  return info;
}

MachineInfo this_machine() {
  std::ifstream file("/proc/cpuinfo");
  std::ostringstream text;
  if (file) text << file.rdbuf();
  MachineInfo info = parse_cpuinfo(text.str());
#if defined(__aarch64__)
  // What the kernel (or the emulator) lets this process use: the truth of the flags on aarch64,
  // native or emulated.
  const unsigned long hwcap = getauxval(AT_HWCAP), hwcap2 = getauxval(AT_HWCAP2);
  const std::map<std::string, bool, std::less<>> has = {
      {"asimd", (hwcap & HWCAP_ASIMD) != 0}, {"asimdhp", (hwcap & HWCAP_ASIMDHP) != 0},
      {"sve", (hwcap & HWCAP_SVE) != 0},     {"sve2", (hwcap2 & HWCAP2_SVE2) != 0},
      {"bf16", (hwcap2 & HWCAP2_BF16) != 0}, {"i8mm", (hwcap2 & HWCAP2_I8MM) != 0}};
  for (auto& [flag, present] : info.flags) present = has.at(flag);
#endif
  return info;
}

int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof(set), &set) == 0 ? std::max(CPU_COUNT(&set), 1) : 1;
}

}  // namespace ropecheck
