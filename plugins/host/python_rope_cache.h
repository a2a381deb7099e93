// A Python callable that declares the fused cache call ("fused_cache" in its `ropecheck`
// attribute) as a RopeCacheImpl (impls/fused/rope_cache_impl.h) with id `python/<module>.<function>`.
// Its worker is the same interpreter on the same driver as a RoPE function's (python_process.h):
// each call copies q, k, v, positions, slots and both caches into guarded shared memory, the
// driver hands them to the function (numpy views, or torch tensors on the declared device), and
// q and the caches come back. An exception, a wrong shape, a hang, a crash or a write outside the
// buffers or into what is read-only is a PluginFailure (PluginHang) naming the call; the next
// call starts a fresh interpreter. The contract: docs/porting.md, "Python: the fused cache call".
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "impls/fused/rope_cache_impl.h"
#include "impls/rope_impl.h"
#include "plugins/host/plugin_guarded_buffers.h"
#include "plugins/host/plugin_host.h"
#include "plugins/host/python_host.h"
#include "plugins/host/python_process.h"

namespace ropecheck {

struct PythonRopeCacheIdentity {
  std::string id;  // "python/<module>.<function>"
  std::string summary;
  RopeCacheCapabilities capabilities;
  // What its rotation declares (the RoPE keys of the declaration: layouts, angles, scaling, ...):
  // a call outside it is an UnsupportedCase, not a failure.
  RopeCapabilities rotation;
  PythonInfo info;
};

using PythonProcessFactory = std::function<std::unique_ptr<PythonProcess>()>;

// `memory` is the one `first` (and every restarted worker) maps.
std::unique_ptr<RopeCacheImpl> make_python_rope_cache(PythonRopeCacheIdentity identity, const PluginOptions& options,
                                                      std::unique_ptr<GuardedBuffers> memory,
                                                      std::unique_ptr<PythonProcess> first,
                                                      PythonProcessFactory restart);

// The identity of an implementation made by make_python_rope_cache(); nullptr for any other.
const PythonRopeCacheIdentity* python_rope_cache_identity(const RopeCacheImpl& impl);

}  // namespace ropecheck
