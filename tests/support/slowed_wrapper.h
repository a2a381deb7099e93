// An executable script acting as ropecheck with ROPECHECK_BENCH_SLOWDOWN set (bench/slowdown.h):
// the current side of a gate test with an injected slowdown.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

namespace ropecheck::test {

inline std::filesystem::path slowed_wrapper(const std::filesystem::path& dir, const std::string& setting) {
  const auto path = dir / "slowed-ropecheck";
  std::ofstream(path) << "#!/bin/sh\nROPECHECK_BENCH_SLOWDOWN='" << setting << "' exec '" << ROPECHECK_CLI_PATH
                      << "' \"$@\"\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

}  // namespace ropecheck::test
