// Running one side of the gate: a fresh process (the base or current ropecheck, or a script that
// acts as one), its stdout and stderr into a log file, waited for. The gate never links the code
// it measures; it only runs it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ropecheck {

// Runs argv (argv[0] looked up on PATH when it has no '/') with this process's environment, in
// `cwd` (empty: this one), stdout and stderr appended to `log`; returns its exit status, or 128 +
// the signal that ended it. Throws InvalidInput when it cannot be started.
int run_child(const std::vector<std::string>& argv, const std::filesystem::path& log,
              const std::filesystem::path& cwd = {});

// The running executable's own path (/proc/self/exe), for the plugin mode's `bench --plugin`.
std::filesystem::path this_executable();

}  // namespace ropecheck
