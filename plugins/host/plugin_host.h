// An outside RoPE kernel (a shared library speaking plugins/include/ropecheck/plugin.h) as a RopeImpl with
// id `plugin/<name>`: verify, list (and bench) use it like a built-in. The library never runs in
// this process: a forked worker child loads it and serves each apply through shared memory with
// guard bytes; a crash, a hang or a write outside the buffers is a PluginFailure (the worker is
// restarted for the next call), never the harness's death.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "impls/attention/attention_impl.h"
#include "impls/fused/rope_cache_impl.h"
#include "impls/fused/rope_form_impl.h"
#include "impls/rope_impl.h"
#include "plugins/host/plugin_protocol.h"

namespace ropecheck {

// The watchdog of one call, unless --plugin-timeout fixes one: a base that covers an honest
// kernel's slowest call on a property's case (a framework's lazy set-up, a sanitizer), plus time
// in proportion to the call's elements, about a thousand times what a scalar kernel needs. A
// property's case (at most 8 tokens x 9 heads x 256) gets about 3 s, a 4096-token prefill 36 s.
inline constexpr double kWatchdogBaseSeconds = 3.0;
inline constexpr double kWatchdogSecondsPerElement = 1e-6;
double watchdog_seconds(std::size_t elements);

inline constexpr int kMaxPluginThreads = 1024;

struct PluginOptions {
  // Longest wait for the worker to answer one apply; 0 (the default): watchdog_seconds() of the
  // call's q and k elements. Past it the worker is killed and the call fails "did not answer
  // within N s" (PluginHang). Loading the library gets at least 120 s: a framework's cold dlopen
  // is slow. Non-negative, may be fractional.
  double timeout_seconds = 0;
  // Threads an ABI 2 plugin may use in a call (call->threads, and init's max_threads); 1 to
  // kMaxPluginThreads. ABI 1 has no such field (the PyTorch peers read ROPECHECK_PLUGIN_THREADS).
  int threads = 1;
  // --python MODULE:FUNCTION (repeatable): Python callables loaded beside the plugins, each in a
  // worker of the interpreter python_exe (python_host.h). Here rather than beside the plugin
  // paths so that every command that takes --plugin loads, lists and replays them the same way.
  std::vector<std::string> python{};
  std::string python_exe = "python3";  // --python-exe: a name searched on PATH, or a path
};

// Throws InvalidInput for a timeout that is negative or not finite, or threads out of range.
void check_plugin_options(const PluginOptions& options);
// How long a worker's load or exit is awaited: the fixed timeout, else the watchdog's base.
double worker_wait_seconds(const PluginOptions& options);

// The plugin did something a correct kernel never does: crashed (by a signal or exit), did not
// answer in time, wrote outside q and k or into positions, or returned ROPECHECK_PLUGIN_ERROR.
// A verdict on the plugin (a FAILED property), not bad input.
class PluginFailure : public std::runtime_error {
 public:
  explicit PluginFailure(const std::string& what) : std::runtime_error(what) {}
};

// The plugin did not answer within its watchdog (and was killed): the property harness reports
// it once as HANG, with the case that hung, and makes no further call for that property.
class PluginHang : public PluginFailure {
 public:
  explicit PluginHang(const std::string& what) : PluginFailure(what) {}
};

// A fused entry's returned status, after its guards were checked: OK returns; UNSUPPORTED
// declines the case (UnsupportedCase); ERROR and anything else fail it (PluginFailure), each
// naming the entry (apply_rope_cache, apply_rope_form) and the call.
void throw_unless_ok(std::int32_t status, std::string_view entry, const std::string& call);

// What the worker read from the library (list --plugin shows it).
struct PluginInfo {
  std::filesystem::path path;
  std::string name;  // the id is "plugin/" + name
  std::uint32_t abi_version = 0;
  std::uint32_t dtypes = 0;  // ROPECHECK_DTYPE_* bits
  int max_head_dim = 0;      // 0: no limit declared
  std::string description;   // what an ABI 2 init said it chose ("" without one)
  // What an ABI 5 plugin's fused entry (apply_rope_cache) declared; empty without one.
  std::optional<RopeCacheCapabilities> rope_cache;
  // What an ABI 6 plugin's form entry (forms->apply_rope_form) declared; empty without one.
  std::optional<RopeFormCapabilities> rope_form;
};

// What a plugin library is: a RoPE plugin (plugin.h), run in its worker child, or an attention
// plugin (attention_plugin.h), tried in a worker child and then loaded into this process
// (attention_plugin_host.h). Exactly one of rope and attention is set; rope_cache beside rope
// when an ABI 5 plugin has the fused entry (plugin_rope_cache.h), rope_form when an ABI 6 plugin
// has the forms entry (plugin_rope_form.h), each with the same id.
struct PluginLibrary {
  std::unique_ptr<RopeImpl> rope;
  std::unique_ptr<AttentionImpl> attention;
  std::unique_ptr<RopeCacheImpl> rope_cache;
  std::unique_ptr<RopeFormImpl> rope_form;
};

// Loads the library in a worker child and checks what it declares. Throws InvalidInput (the CLI's
// exit 2) naming the problem: no such file, not loadable, no entry symbol, a wrong ABI version,
// a malformed capability record, or a crash or hang while loading.
PluginLibrary load_plugin_library(const std::filesystem::path& path, const PluginOptions& options = {});
// The same for a RoPE plugin only: an attention plugin is InvalidInput too.
std::unique_ptr<RopeImpl> load_plugin(const std::filesystem::path& path,
                                      const PluginOptions& options = {});

// The PluginInfo of an implementation made by load_plugin(); nullptr for any other.
const PluginInfo* plugin_info(const RopeImpl& impl);

// What a timed call measured in the worker (plugin_protocol.h, CallMessage::probe).
struct WorkerTimedCall {
  double apply_seconds = 0;  // the plugin's apply alone: no copies, no request or reply
  double probe_seconds = 0;  // probe_passes of the same-run probe over the same bytes
  std::int64_t probe_passes = 0;
};
using plugin_protocol::WorkerProbe;

// How `bench` times a plugin where it runs, as the built-ins are timed in their thread: stage()
// puts q and k (elements of `storage`, as bytes) and the positions into the worker's shared
// memory once; each timed_call() then applies the plugin to them there (in place, again and
// again, as a built-in's benchmark loop does), timed by the worker, and runs the probe after it.
// Failures as for apply (PluginFailure, PluginHang, UnsupportedCase).
class PluginTimer {
 public:
  virtual void stage(const RopeSpec& spec, StorageType storage, std::span<const std::byte> q,
                     std::int64_t q_heads, std::span<const std::byte> k, std::int64_t k_heads,
                     PositionIds positions) const = 0;
  // threads: the call's thread count (ABI 2's call->threads), at most PluginOptions::threads.
  virtual WorkerTimedCall timed_call(WorkerProbe probe, int threads) const = 0;
  // One ordinary call at `threads`, as apply makes it: q and k copied into the shared memory and
  // back, one request and reply (what the process boundary costs, timed by the caller).
  virtual void apply_at(const RopeSpec& spec, StorageType storage, std::span<std::byte> q, std::int64_t q_heads,
                        std::span<std::byte> k, std::int64_t k_heads, PositionIds positions, int threads) const = 0;

 protected:
  ~PluginTimer() = default;
};

// The PluginTimer of an implementation made by load_plugin(); nullptr for any other.
const PluginTimer* plugin_timer(const RopeImpl& impl);

}  // namespace ropecheck
