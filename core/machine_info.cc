// MachineInfo from /proc/cpuinfo: "key<tabs>: value" lines, one block per logical processor.
// Recorded as "machine" in verify.json; tested in tests/cli/cli_test.cc (CliLibrary.ParseCpuinfo*).
#include "core/machine_info.h"

#include <sched.h>

#include <algorithm>
#include <fstream>
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

}  // namespace

const std::vector<std::string>& cpu_flags_of_interest() {
  static const std::vector<std::string> flags = {"avx2", "avx512f", "avx512bw", "avx512vl",
                                                 "avx512_bf16"};
  return flags;
}

MachineInfo parse_cpuinfo(const std::string& cpuinfo) {
  MachineInfo info;
  std::set<std::string, std::less<>> present;
  bool have_model = false, have_flags = false;
  std::istringstream lines(cpuinfo);
  for (std::string line; std::getline(lines, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto key = trim(std::string_view(line).substr(0, colon));
    const auto value = trim(std::string_view(line).substr(colon + 1));
    if (key == "processor") {
      ++info.logical_cpus;
    } else if (key == "model name" && !have_model) {
      info.cpu_model = std::string(value);
      have_model = true;
    } else if (key == "flags" && !have_flags) {
      std::istringstream words{std::string(value)};
      for (std::string word; words >> word;) present.insert(word);
      have_flags = true;
    }
  }
  if (info.cpu_model.empty()) info.cpu_model = "unknown";
  for (const auto& flag : cpu_flags_of_interest()) {
    info.flags.emplace_back(flag, present.contains(flag));
  }
  return info;
}

MachineInfo this_machine() {
  std::ifstream file("/proc/cpuinfo");
  std::ostringstream text;
  if (file) text << file.rdbuf();
  return parse_cpuinfo(text.str());
}

int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof(set), &set) == 0 ? std::max(CPU_COUNT(&set), 1) : 1;
}

}  // namespace ropecheck
