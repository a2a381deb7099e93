// One Python worker from the host's side: the user's interpreter exec'd on the driver script
// (plugins/python/ropecheck_driver.py) with the channel and the shared memory file as inherited
// descriptors. Messages are JSON: the driver's hello, then one request and one reply per call.
// A timed call is timed by the driver around the function alone; the same-run probe then runs
// here, over the same shared bytes (the driver cannot run the host's code).
#pragma once

#include <nlohmann/json.hpp>

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "plugins/host/child_channel.h"
#include "plugins/host/outside_rope.h"
#include "plugins/host/plugin_guarded_buffers.h"
#include "ropecheck/plugin.h"

namespace ropecheck {

// The contract's spec dict: the ABI's spec (each scaling parameter set for the kinds that read
// it, zero otherwise) under HF transformers' rope_scaling names; `factors`: a LongRoPE spec's
// short_factor then long_factor, empty for the other kinds.
nlohmann::json python_spec(const ropecheck_plugin_spec& spec, std::span<const double> factors);

struct PythonStart {
  std::string interpreter;  // an executable path
  std::string driver;       // the driver script
  std::string target;       // MODULE:FUNCTION
};

class PythonProcess final : public CallServer {
 public:
  // Execs the interpreter and waits for the driver's hello (at least 120 s: importing a
  // framework from a cold disk is slow). PluginFailure when it dies or stays silent.
  PythonProcess(const PythonStart& start, const GuardedBuffers& memory, double timeout_seconds);

  // {"ok": true, "name", "summary", "python", "numpy", "declaration"} or {"ok": false, "error"}.
  const nlohmann::json& hello() const { return hello_; }

  plugin_protocol::ReplyMessage exchange(const plugin_protocol::CallMessage& message,
                                         std::string_view function, double seconds) override;
  // One request of any call (a RoPE call's, a fused cache call's) and its reply: {"status": "ok",
  // ...} or not, the reason then in error_detail() with the user's line. PluginFailure and
  // PluginHang as exchange().
  nlohmann::json call(const nlohmann::json& request, std::string_view function, double seconds);
  std::string error_detail() const override { return error_; }

 private:
  static void run(int channel, const void* self);
  nlohmann::json receive_json(std::string_view during, double seconds);
  nlohmann::json request(const plugin_protocol::CallMessage& message) const;

  // execv's arguments, made before fork: the child must not allocate.
  std::vector<std::string> args_;
  std::vector<char*> argv_;
  int memory_fd_;
  const GuardedBuffers& memory_;
  ChildChannel child_;
  std::string buffer_;  // a received message
  nlohmann::json hello_;
  std::string error_;
};

}  // namespace ropecheck
