// progress_log(): spdlog's stderr sink, created once and shared by every command.
//   ropecheck verify 2>/dev/null   (silences progress, keeps the results)
#include "core/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace ropecheck {

spdlog::logger& progress_log() {
  // spdlog's default logger writes to stdout; ours must not, so it is a separate stderr logger.
  static const std::shared_ptr<spdlog::logger> logger = [] {
    if (auto existing = spdlog::get("ropecheck")) return existing;
    auto created = spdlog::stderr_color_mt("ropecheck");
    created->set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
    return created;
  }();
  return *logger;
}

}  // namespace ropecheck
