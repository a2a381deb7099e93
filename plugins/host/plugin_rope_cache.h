// An ABI 5 plugin's fused entry (plugin.h, apply_rope_cache) as a RopeCacheImpl with id
// `plugin/<name>`, beside the plugin's RopeImpl of the same name (plugin_host.h). It runs in a
// worker child of its own, started on the first call, as every plugin call does: q, k, v, the
// positions, the slots, both caches and the FP8 scales lie in guarded shared memory
// (plugin_guarded_buffers.h); a crash, a hang, a write outside q or the caches, a change to what is
// read-only, or ROPECHECK_PLUGIN_ERROR is a PluginFailure (the worker restarted for the next
// call), never the harness's death.
#pragma once

#include <memory>
#include <optional>

#include "impls/fused/rope_cache_impl.h"
#include "plugins/host/outside_rope.h"
#include "plugins/host/plugin_guarded_buffers.h"
#include "plugins/host/plugin_host.h"
#include "ropecheck/plugin.h"

namespace ropecheck {

// Why the fused capabilities an ABI 5 plugin declared are unacceptable, "" when they are fine: a
// mask empty or with unknown bits, an FP8 storage without a scale direction, an unknown padding rule.
std::string judge_rope_cache_capabilities(const ropecheck_plugin_cache_capabilities& caps);
RopeCacheCapabilities to_rope_cache_capabilities(const ropecheck_plugin_cache_capabilities& caps);

// The fused implementation of a loaded plugin: `identity` is its RoPE side's (id, summary, and the
// RoPE capabilities its rotations must stay within: a spec outside them is UnsupportedCase);
// `start` starts a worker (plugin_host.cc's restart) on `memory`.
std::unique_ptr<RopeCacheImpl> make_plugin_rope_cache(OutsideIdentity identity, RopeCacheCapabilities capabilities,
                                                      const PluginOptions& options,
                                                      std::unique_ptr<GuardedBuffers> memory,
                                                      CallServerFactory start);

// The PluginInfo of an implementation made by make_plugin_rope_cache(); nullptr for any other.
const PluginInfo* plugin_info(const RopeCacheImpl& impl);

}  // namespace ropecheck
