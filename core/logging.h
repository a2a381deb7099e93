// The CLI's progress logger: spdlog to stderr, so that stdout carries results only and can be
// piped or diffed (`ropecheck verify > table.txt` still shows progress on the terminal).
#pragma once

#include <spdlog/logger.h>

namespace ropecheck {

// One shared stderr logger named "ropecheck", created on first use.
spdlog::logger& progress_log();

}  // namespace ropecheck
