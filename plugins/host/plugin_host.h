// An outside RoPE kernel (a shared library speaking plugins/include/ropecheck/plugin.h) as a RopeImpl with
// id `plugin/<name>`: verify, list (and bench) use it like a built-in. The library never runs in
// this process: a forked worker child loads it and serves each apply through shared memory with
// guard bytes; a crash, a hang or a write outside the buffers is a PluginFailure (the worker is
// restarted for the next call), never the harness's death.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include "impls/rope_impl.h"

namespace ropecheck {

// Where --plugin-timeout starts: long enough for any honest kernel on a tiny case under ASan.
inline constexpr double kDefaultPluginTimeoutSeconds = 10.0;

struct PluginOptions {
  // Longest wait for the worker to answer one apply (loading the library gets at least 120 s:
  // a framework's cold dlopen is slow); past it the worker is killed and the call fails "did
  // not answer within N s". Positive, may be fractional.
  double timeout_seconds = kDefaultPluginTimeoutSeconds;
};

// The plugin did something a correct kernel never does: crashed (by a signal or exit), did not
// answer in time, wrote outside q and k or into positions, or returned ROPECHECK_PLUGIN_ERROR.
// A verdict on the plugin (a FAILED property), not bad input.
class PluginFailure : public std::runtime_error {
 public:
  explicit PluginFailure(const std::string& what) : std::runtime_error(what) {}
};

// What the worker read from the library (list --plugin shows it).
struct PluginInfo {
  std::filesystem::path path;
  std::string name;  // the id is "plugin/" + name
  std::uint32_t abi_version = 0;
  std::uint32_t dtypes = 0;  // ROPECHECK_DTYPE_* bits
  int max_head_dim = 0;      // 0: no limit declared
};

// Loads the plugin in a worker child and checks what it declares. Throws InvalidInput (the CLI's
// exit 2) naming the problem: no such file, not loadable, no entry symbol, a wrong ABI version,
// a malformed capability record, or a crash or hang while loading.
std::unique_ptr<RopeImpl> load_plugin(const std::filesystem::path& path,
                                      const PluginOptions& options = {});

// The PluginInfo of an implementation made by load_plugin(); nullptr for any other.
const PluginInfo* plugin_info(const RopeImpl& impl);

}  // namespace ropecheck
