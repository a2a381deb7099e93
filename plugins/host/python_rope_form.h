// A Python callable that declares RoPE in an engine's call form ("rope_form" in its `ropecheck`
// attribute) as a RopeFormImpl (impls/fused/rope_form_impl.h) with id `python/<module>.<function>`.
// Its worker is the same interpreter on the same driver as a RoPE function's (python_process.h):
// each call copies the one buffer (q, k and what lies around them), the positions, the cos/sin
// cache and the norm's weights into guarded shared memory; the driver hands the function q and k
// as strided views of that buffer (numpy, or torch tensors on the declared device), so that its
// writes land in place, and the whole buffer comes back. An exception, a wrong shape, a hang, a
// crash, or a write outside the buffers or into what is read-only is a PluginFailure (PluginHang)
// naming the call; the next call starts a fresh interpreter. The contract: docs/porting.md,
// "Python: the call forms".
#pragma once

#include <memory>
#include <string>

#include "impls/fused/rope_form_impl.h"
#include "impls/rope_impl.h"
#include "plugins/host/plugin_guarded_buffers.h"
#include "plugins/host/plugin_host.h"
#include "plugins/host/python_host.h"
#include "plugins/host/python_process.h"
#include "plugins/host/python_rope_cache.h"

namespace ropecheck {

struct PythonRopeFormIdentity {
  std::string id;  // "python/<module>.<function>"
  std::string summary;
  RopeFormCapabilities capabilities;
  // What its rotation declares (the RoPE keys: layouts, angles, partial_rotary, ...): a call
  // outside it is an UnsupportedCase, not a failure.
  RopeCapabilities rotation;
  PythonInfo info;
};

// `memory` is the one `first` (and every restarted worker) maps.
std::unique_ptr<RopeFormImpl> make_python_rope_form(PythonRopeFormIdentity identity, const PluginOptions& options,
                                                    std::unique_ptr<GuardedBuffers> memory,
                                                    std::unique_ptr<PythonProcess> first,
                                                    PythonProcessFactory restart);

// The identity of an implementation made by make_python_rope_form(); nullptr for any other.
const PythonRopeFormIdentity* python_rope_form_identity(const RopeFormImpl& impl);

}  // namespace ropecheck
