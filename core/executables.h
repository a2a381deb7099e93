// Finding an executable the way a user's shell would, for the tools ropecheck runs (gnuplot,
// valgrind): the first regular, executable file of that name in a PATH directory.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

namespace ropecheck {

// Empty PATH entries (the current directory) are skipped: a tool ropecheck runs is never meant
// to be whatever file of that name the working directory holds.
std::optional<std::filesystem::path> find_on_path(std::string_view name);

// Whether `path` is a regular file this process may execute.
bool is_executable_file(const std::filesystem::path& path);

}  // namespace ropecheck
