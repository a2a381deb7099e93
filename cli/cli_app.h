// The `ropecheck` command line: parse, call one library function, print.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>


namespace ropecheck {

// The whole CLI: parses argv, runs the command, maps every error to a message on `err` and an
// exit code (help and --version: 0; bad usage or InvalidInput: 2). Never throws.
int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err);
int run_cli(int argc, char** argv);  // with std::cout / std::cerr

}  // namespace ropecheck
