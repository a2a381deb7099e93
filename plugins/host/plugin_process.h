// One plugin worker child from the host's side: fork it (it loads the library and reports), send
// it calls, and turn its death or silence into a PluginFailure that says what happened
// ("plugin crashed with SIGSEGV", "plugin did not answer within 10 s"; child_channel.h). After a
// failure the worker is gone; the owner starts a new one for the next call.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "plugins/host/child_channel.h"
#include "plugins/host/outside_rope.h"
#include "plugins/host/plugin_protocol.h"

namespace ropecheck {

class WorkerProcess final : public CallServer {
 public:
  // Forks the worker for `path` on the memory file `memory_fd` and waits for its LoadReport
  // (max_threads: what an ABI 2 init is told). Throws PluginFailure when it dies or stays silent
  // for timeout_seconds (at least 120 s) while loading; timeout_seconds is also how long a dead
  // worker's exit is awaited.
  WorkerProcess(const std::filesystem::path& path, int memory_fd, double timeout_seconds,
                int max_threads);

  const plugin_protocol::LoadReport& report() const { return report_; }

  // One apply, waiting up to `seconds`: the whole reply (a timed call's measurements too).
  // PluginFailure on a crash, PluginHang past the wait (the worker is killed and reaped first);
  // the object is then spent.
  plugin_protocol::ReplyMessage exchange(const plugin_protocol::CallMessage& message,
                                         std::string_view function, double seconds) override;

 private:
  struct Start {
    std::string path;  // made before fork: the child must not allocate
    int memory_fd;
    int max_threads;
  };
  static void run(int channel, const void* start);

  Start start_;
  ChildChannel child_;
  plugin_protocol::LoadReport report_;
};

}  // namespace ropecheck
