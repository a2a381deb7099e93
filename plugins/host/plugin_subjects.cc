// load_plugins() and plugin_arguments() (plugin_subjects.h).
#include "plugins/host/plugin_subjects.h"

#include <fmt/format.h>

#include "core/errors.h"
#include "plugins/host/python_host.h"

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
  for (const auto& target : options.python) {
    std::shared_ptr<const RopeImpl> function = load_python(target, options);
    for (const auto& other : loaded) {
      if (other->id() == function->id()) {
        throw InvalidInput(fmt::format("--python '{}' and '{}' are both {}", target,
                                       python_info(*other)->target, function->id()));
      }
    }
    loaded.push_back(std::move(function));
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
  for (const auto& target : options.python) {
    // A file's path made absolute; a module name stays (found from the directory the command ran
    // in, as the user's was).
    const auto colon = target.rfind(':');
    const std::string module = target.substr(0, colon == std::string::npos ? 0 : colon);
    std::error_code ignored;
    const bool file = module.ends_with(".py") || module.find('/') != std::string::npos;
    const auto absolute = file ? std::filesystem::absolute(module, ignored) : std::filesystem::path();
    args.insert(args.end(), {"--python", absolute.empty() ? target : absolute.string() + target.substr(colon)});
  }
  if (!options.python.empty() && options.python_exe != PluginOptions{}.python_exe) {
    std::error_code ignored;  // a path made absolute, a bare name left to PATH
    const auto exe = options.python_exe.find('/') != std::string::npos
                         ? std::filesystem::absolute(options.python_exe, ignored).string()
                         : options.python_exe;
    args.insert(args.end(), {"--python-exe", exe.empty() ? options.python_exe : exe});
  }
  if (paths.empty() && options.python.empty()) return args;
  if (options.timeout_seconds != PluginOptions{}.timeout_seconds) {
    args.insert(args.end(), {"--plugin-timeout", fmt::format("{:g}", options.timeout_seconds)});
  }
  if (options.threads != PluginOptions{}.threads) {
    args.insert(args.end(), {"--plugin-threads", std::to_string(options.threads)});
  }
  return args;
}

}  // namespace ropecheck
