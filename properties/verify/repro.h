// Commands printed for a human to paste into a POSIX shell: the __REPRO command that replays one
// failure, and the `ropecheck verify ...` equivalent of a set of options.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "properties/verify/verify.h"
#include "properties/property.h"

namespace ropecheck {

// The argument as the shell must see it: unchanged when it is made of safe characters, otherwise
// in single quotes (a ' inside written as '\'').
std::string shell_quote(std::string_view arg);
// Arguments joined by spaces, each shell-quoted.
std::string shell_command(const std::vector<std::string>& args);

// `ropecheck verify --impl X --property P --seed S --reproduce 'STR'`: replays the shrunk
// failing case. Without a reproduce string (a failure outside RapidCheck's cases) the same seed
// and case count rerun the pair deterministically, so those are given instead.
std::string repro_command(const PropertyResult& result, const RunConfig& config);

// The arguments of a `ropecheck verify` equivalent to `options`.
std::vector<std::string> verify_command_line(const VerifyOptions& options);

}  // namespace ropecheck
