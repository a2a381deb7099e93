// --plugin and --python for `verify`, `bench` and `list`: every path loaded by load_plugin_library() and
// every callable of PluginOptions::python by load_python() (each in its own worker child), and
// the arguments a printed command (a __REPRO line) needs to load them again.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "impls/attention/attention_impl.h"
#include "impls/fused/rope_cache_impl.h"
#include "impls/fused/rope_form_impl.h"
#include "impls/rope_impl.h"
#include "plugins/host/plugin_host.h"

namespace ropecheck {

// What --plugin and --python loaded: RoPE plugins and Python callables (each in its worker
// child), attention plugins (attention_plugin.h, in this process), and fused cache calls
// (impls/fused/rope_cache_impl.h): the fused entries of ABI 5 plugins (plugin_rope_cache.h) and
// Python callables declaring "fused_cache", each in a worker child; and the call forms with
// QK-norm (impls/fused/rope_form_impl.h): the forms entries of ABI 6 plugins (plugin_rope_form.h)
// and Python callables declaring "rope_form" (python_rope_form.h).
struct LoadedPlugins {
  std::vector<std::shared_ptr<const RopeImpl>> rope;
  std::vector<std::shared_ptr<const AttentionImpl>> attention;
  std::vector<std::shared_ptr<const RopeCacheImpl>> rope_cache;
  std::vector<std::shared_ptr<const RopeFormImpl>> rope_form;
};

// Throws InvalidInput for a plugin or Python callable that does not load (load_plugin_library(),
// load_python_subject()) and for two with the same id.
LoadedPlugins load_plugins(const std::vector<std::filesystem::path>& paths,
                           const PluginOptions& options);

// {"--plugin", PATH, ..., "--python", TARGET, ..., "--python-exe", EXE, "--plugin-timeout", T,
// "--plugin-threads", N}; EXE, T and N only when they are not the defaults (python3; 0: the
// watchdog from each call's size; 1 thread); {} without plugins. Paths made absolute, so that the
// command replays from any directory; a Python target as given (it may be relative to the
// directory the command ran in, as the __REPRO line is).
std::vector<std::string> plugin_arguments(const std::vector<std::filesystem::path>& paths,
                                          const PluginOptions& options);

}  // namespace ropecheck
