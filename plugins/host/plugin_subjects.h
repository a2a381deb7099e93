// --plugin for `verify` and `list`: every path loaded by load_plugin() (each in its own worker
// child), and the arguments a printed command (a __REPRO line) needs to load them again.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "impls/rope_impl.h"
#include "plugins/host/plugin_host.h"

namespace ropecheck {

using LoadedPlugins = std::vector<std::shared_ptr<const RopeImpl>>;

// Throws InvalidInput for a plugin that does not load (load_plugin()) and for two plugins with
// the same name (their ids would collide).
LoadedPlugins load_plugins(const std::vector<std::filesystem::path>& paths,
                           const PluginOptions& options);

// {"--plugin", PATH, ..., "--plugin-timeout", T, "--plugin-threads", N}; T and N only when they
// are not the defaults (0: the watchdog from each call's size; 1 thread); {} without plugins. Paths made absolute, so that the command replays from
// any directory.
std::vector<std::string> plugin_arguments(const std::vector<std::filesystem::path>& paths,
                                          const PluginOptions& options);

}  // namespace ropecheck
