// One plugin worker child from the host's side: fork it (it loads the library and reports), send
// it calls, and turn its death or silence into a PluginFailure that says what happened
// ("plugin crashed with SIGSEGV", "plugin did not answer within 10 s"). After a failure the
// worker is gone; the owner starts a new one for the next call.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string_view>

#include "plugins/host/plugin_protocol.h"

namespace ropecheck {

class WorkerProcess {
 public:
  // Forks the worker for `path` on the memory file `memory_fd` and waits for its LoadReport
  // (max_threads: what an ABI 2 init is told). Throws PluginFailure when it dies or stays silent
  // for timeout_seconds (at least 120 s) while loading; timeout_seconds is also how long a dead
  // worker's exit is awaited.
  WorkerProcess(const std::filesystem::path& path, int memory_fd, double timeout_seconds,
                int max_threads);
  ~WorkerProcess();  // closes the channel (the worker then exits) and reaps it
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  const plugin_protocol::LoadReport& report() const { return report_; }

  // One apply, waiting up to `seconds`: the status the plugin returned. PluginFailure on a crash,
  // PluginHang past the wait (the worker is killed and reaped first); the object is then spent.
  std::int32_t call(const plugin_protocol::CallMessage& message, std::string_view function,
                    double seconds) {
    return exchange(message, function, seconds).status;
  }
  // The same, with the whole reply (a timed call's measurements).
  plugin_protocol::ReplyMessage exchange(const plugin_protocol::CallMessage& message,
                                         std::string_view function, double seconds);

 private:
  // Waits up to `seconds` for exactly one message of this size.
  void receive(void* message, std::size_t bytes, std::string_view during, double seconds);
  [[noreturn]] void fail_dead(std::string_view during);
  [[noreturn]] void fail_silent(std::string_view during, double seconds);
  void reap(bool kill_first);

  pid_t pid_ = -1;
  int channel_ = -1;
  double timeout_seconds_;
  plugin_protocol::LoadReport report_;
};

}  // namespace ropecheck
