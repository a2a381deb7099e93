// load_plugins() and plugin_arguments() (plugin_subjects.h).
#include "plugins/host/plugin_subjects.h"

#include <fmt/format.h>

#include "core/errors.h"

namespace ropecheck {

LoadedPlugins load_plugins(const std::vector<std::filesystem::path>& paths,
                           const PluginOptions& options) {
  LoadedPlugins loaded;
  for (const auto& path : paths) {
    std::shared_ptr<const RopeImpl> plugin = load_plugin(path, options);
    for (const auto& other : loaded) {
      if (other->id() == plugin->id()) {
        throw InvalidInput(fmt::format("plugins '{}' and '{}' are both named {}", path.string(),
                                       plugin_info(*other)->path.string(), plugin->id()));
      }
    }
    loaded.push_back(std::move(plugin));
  }
  return loaded;
}

std::vector<std::string> plugin_arguments(const std::vector<std::filesystem::path>& paths,
                                          const PluginOptions& options) {
  std::vector<std::string> args;
  for (const auto& path : paths) {
    std::error_code ignored;
    const auto absolute = std::filesystem::absolute(path, ignored);
    args.insert(args.end(), {"--plugin", (absolute.empty() ? path : absolute).string()});
  }
  if (paths.empty()) return args;
  if (options.timeout_seconds != PluginOptions{}.timeout_seconds) {
    args.insert(args.end(), {"--plugin-timeout", fmt::format("{:g}", options.timeout_seconds)});
  }
  if (options.threads != PluginOptions{}.threads) {
    args.insert(args.end(), {"--plugin-threads", std::to_string(options.threads)});
  }
  return args;
}

}  // namespace ropecheck
