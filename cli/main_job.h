// `ropecheck` with no arguments: the main job (verify, accuracy, a short bench, the report).
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>


namespace ropecheck {

// `ropecheck` with no arguments: verify with mutants into kDefaultOutDir (a bench and a report
// join it later). `command_line` is recorded in the result files.
int run_main_job(std::ostream& out, std::vector<std::string> command_line);

}  // namespace ropecheck
