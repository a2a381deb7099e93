// `ropecheck list`: the registry (implementations, mutants), the property catalogue and the
// capabilities of --plugin libraries, as a table or JSON.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "plugins/host/plugin_host.h"

namespace ropecheck {

struct ListOptions {
  bool json = false;
  std::vector<std::filesystem::path> plugins;  // --plugin: loaded (in a child) and listed
  PluginOptions plugin_options;  // --plugin-timeout, --plugin-threads
};

// Prints the registry (implementations, mutants) and the property catalogue, and the --plugin
// libraries' capabilities. Returns kExitOk; InvalidInput for a plugin that does not load.
int run_list(const ListOptions& options, std::ostream& out);

}  // namespace ropecheck
