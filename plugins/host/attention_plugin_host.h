// An attention plugin (plugins/include/ropecheck/attention_plugin.h) as an AttentionImpl with id
// `plugin/<name>`: verify and bench use it like attention_blas. Loaded into this process once a
// worker child has tried it (plugin_host.cc: a library that crashes or fails its init there is
// refused first). Each process that calls it makes its own context (init) on its first call:
// verify's workers are forks, and a context's threads do not cross a fork.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "impls/attention/attention_impl.h"
#include "plugins/host/plugin_protocol.h"

namespace ropecheck {

// What ropecheck read from an attention plugin (list --plugin shows it).
struct AttentionPluginInfo {
  std::filesystem::path path;
  std::string name;         // the id is "plugin/" + name
  StorageType kv_storage = StorageType::fp32;
  int max_head_dim = 0;     // 0: no limit declared
  std::string description;  // what init said it chose in the worker
};

// The worker's report `tried` (stage attention_loaded, judged) made an implementation of the
// library at `absolute`, dlopen()ed here. Throws InvalidInput when it does not load here as it did
// there.
std::unique_ptr<AttentionImpl> load_attention_plugin_here(const std::filesystem::path& absolute,
                                                          const plugin_protocol::LoadReport& tried);

// The AttentionPluginInfo of an implementation made above; nullptr for any other.
const AttentionPluginInfo* attention_plugin_info(const AttentionImpl& impl);

}  // namespace ropecheck
