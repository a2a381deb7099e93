// load_plugins() and plugin_arguments() (plugin_subjects.h).
#include "plugins/host/plugin_subjects.h"

#include <fmt/format.h>

#include "core/errors.h"
#include "plugins/host/attention_plugin_host.h"
#include "plugins/host/python_host.h"

namespace ropecheck {

LoadedPlugins load_plugins(const std::vector<std::filesystem::path>& paths,
                           const PluginOptions& options) {
  LoadedPlugins loaded;
  const auto path_of = [&](std::string_view id) {
    for (const auto& other : loaded.rope) {
      if (other->id() == id) return plugin_info(*other)->path;
    }
    for (const auto& other : loaded.attention) {
      if (other->id() == id) return attention_plugin_info(*other)->path;
    }
    return std::filesystem::path();
  };
  for (const auto& path : paths) {
    PluginLibrary library = load_plugin_library(path, options);
    const std::string id(library.rope != nullptr ? library.rope->id() : library.attention->id());
    if (const auto other = path_of(id); !other.empty()) {
      throw InvalidInput(fmt::format("plugins '{}' and '{}' are both named {}", path.string(), other.string(), id));
    }
    if (library.rope_cache != nullptr) loaded.rope_cache.push_back(std::move(library.rope_cache));
    if (library.rope_form != nullptr) loaded.rope_form.push_back(std::move(library.rope_form));
    if (library.rope != nullptr) {
      loaded.rope.push_back(std::move(library.rope));
    } else {
      loaded.attention.push_back(std::move(library.attention));
    }
  }
  // A Python id is python/<module>.<function> whatever the function is: one among both kinds.
  const auto python_target_of = [&](std::string_view id) -> const PythonInfo* {
    for (const auto& other : loaded.rope) {
      if (other->id() == id) return python_info(*other);
    }
    for (const auto& other : loaded.rope_cache) {
      if (other->id() == id) return python_info(*other);
    }
    for (const auto& other : loaded.rope_form) {
      if (other->id() == id) return python_info(*other);
    }
    return nullptr;
  };
  for (const auto& target : options.python) {
    PythonSubject function = load_python_subject(target, options);
    const std::string id(function.rope != nullptr         ? function.rope->id()
                         : function.rope_cache != nullptr ? function.rope_cache->id()
                                                          : function.rope_form->id());
    if (const PythonInfo* other = python_target_of(id); other != nullptr) {
      throw InvalidInput(fmt::format("--python '{}' and '{}' are both {}", target, other->target, id));
    }
    if (function.rope != nullptr) {
      loaded.rope.push_back(std::move(function.rope));
    } else if (function.rope_cache != nullptr) {
      loaded.rope_cache.push_back(std::move(function.rope_cache));
    } else {
      loaded.rope_form.push_back(std::move(function.rope_form));
    }
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
