// Outside code as a RopeImpl: a plugin library (plugin_host.h) or a Python callable
// (python_host.h) that runs in a worker child, behind guard bytes. Both are one OutsideRope:
// every rotate_qk copies q, k and positions into the guarded shared memory, has the worker apply
// them (a CallServer: the one thing that differs), checks the guards and what is read-only, and
// copies back; a crash, a hang or a scribble restarts the worker for the next call.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include "impls/rope_impl.h"
#include "plugins/host/plugin_guarded_buffers.h"
#include "plugins/host/plugin_host.h"
#include "plugins/host/plugin_protocol.h"
#include "plugins/host/python_host.h"

namespace ropecheck {

// One worker that serves calls on the shared memory. exchange() throws PluginFailure on a crash
// and PluginHang past `seconds` (the worker is then spent); a status other than OK with a reason
// leaves the reason in error_detail().
class CallServer {
 public:
  virtual ~CallServer() = default;
  virtual plugin_protocol::ReplyMessage exchange(const plugin_protocol::CallMessage& message,
                                                 std::string_view function, double seconds) = 0;
  // Why the last call returned ROPECHECK_PLUGIN_ERROR, "" when the worker cannot say (a C plugin).
  virtual std::string error_detail() const { return {}; }
};

// Starts a fresh worker on the same shared memory after a failure; throws PluginFailure when it
// no longer starts.
using CallServerFactory = std::function<std::unique_ptr<CallServer>()>;

struct OutsideIdentity {
  std::string id;       // "plugin/<name>" or "python/<module>.<function>"
  std::string summary;
  RopeCapabilities capabilities;
  std::string noun;     // in messages: "plugin", "Python function"
  std::variant<PluginInfo, PythonInfo> info;
};

std::unique_ptr<RopeImpl> make_outside_rope(OutsideIdentity identity, const PluginOptions& options,
                                            std::unique_ptr<GuardedBuffers> memory,
                                            std::unique_ptr<CallServer> first, CallServerFactory restart);

// The spec as the ABI carries it; the LongRoPE factor arrays travel in shared memory (the worker
// sets the pointers). Each scaling parameter is set for the kinds that read it, zero otherwise
// (plugin.h), and the attention factor is resolved here, as frequency.h resolves it.
ropecheck_plugin_spec to_plugin_spec(const RopeSpec& spec);

// Whether a plugin's or a Python function's name can follow "plugin/" or "python/" in an id:
// [A-Za-z0-9_.-], not empty.
bool valid_subject_name(std::string_view name);

// The identity of an implementation made by make_outside_rope(); nullptr for any other.
const OutsideIdentity* outside_identity(const RopeImpl& impl);

}  // namespace ropecheck
