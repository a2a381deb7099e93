// An ABI 6 plugin's form entry (plugin.h, forms->apply_rope_form) as a RopeFormImpl with id
// `plugin/<name>`, beside the plugin's RopeImpl of the same name (plugin_host.h). It runs in a
// worker child of its own, started on the first call, as every plugin call does: the whole buffer
// (q, k and what lies around them), the positions, the cos/sin cache and the norm weights lie in
// guarded shared memory (plugin_guarded_buffers.h); a crash, a hang, a write outside the buffer, a
// change to what is read-only, or ROPECHECK_PLUGIN_ERROR is a PluginFailure naming the call (the
// worker restarted for the next call), never the harness's death. What the call does inside the
// buffer (the untouched elements between the views included) is the properties' to judge.
#pragma once

#include <memory>
#include <string>

#include "impls/fused/rope_form_impl.h"
#include "plugins/host/outside_rope.h"
#include "plugins/host/plugin_guarded_buffers.h"
#include "plugins/host/plugin_host.h"
#include "ropecheck/plugin.h"

namespace ropecheck {

// Why the form capabilities an ABI 6 plugin declared are unacceptable, "" when they are fine: a
// mask empty or with unknown bits, an unknown norm precision, neither plain calls nor a norm.
std::string judge_form_capabilities(const ropecheck_plugin_form_capabilities& caps);
RopeFormCapabilities to_rope_form_capabilities(const ropecheck_plugin_form_capabilities& caps);

// The form implementation of a loaded plugin: `identity` is its RoPE side's (id, summary, and the
// RoPE capabilities its rotations stay within); `start` starts a worker (plugin_host.cc's
// restart) on `memory`.
std::unique_ptr<RopeFormImpl> make_plugin_rope_form(OutsideIdentity identity, RopeFormCapabilities capabilities,
                                                    const PluginOptions& options,
                                                    std::unique_ptr<GuardedBuffers> memory,
                                                    CallServerFactory start);

// The PluginInfo of an implementation made by make_plugin_rope_form(); nullptr for any other.
const PluginInfo* plugin_info(const RopeFormImpl& impl);

}  // namespace ropecheck
