// WorkerProcess (plugin_process.h): a ChildChannel whose child is a fork of the host that loads
// the plugin (plugin_worker.cc), and the fixed-size messages of plugin_protocol.h. fork() rather
// than exec of a worker binary: any host (ropecheck, a test, a benchmark) can then run plugins,
// and ASan builds need nothing extra.
#include "plugins/host/plugin_process.h"

#include <algorithm>

#include "plugins/host/plugin_worker.h"

namespace ropecheck {
namespace {

template <typename Message>
void receive_exactly(ChildChannel& child, Message& message, std::string_view during, double seconds) {
  if (child.receive(&message, sizeof message, during, seconds) != sizeof message) child.fail_dead(during);
}

}  // namespace

void WorkerProcess::run(int channel, const void* start) {
  const auto& s = *static_cast<const Start*>(start);
  run_plugin_worker(channel, s.memory_fd, s.path.c_str(), s.max_threads);
}

WorkerProcess::WorkerProcess(const std::filesystem::path& path, int memory_fd, double timeout_seconds,
                             int max_threads)
    : start_{path.string(), memory_fd, max_threads}, child_(&WorkerProcess::run, &start_, "plugin", timeout_seconds) {
  receive_exactly(child_, report_, "loading", std::max(timeout_seconds, kLoadTimeoutSeconds));
}

plugin_protocol::ReplyMessage WorkerProcess::exchange(const plugin_protocol::CallMessage& message,
                                                      std::string_view function, double seconds) {
  child_.send(&message, sizeof message, function);
  plugin_protocol::ReplyMessage reply;
  receive_exactly(child_, reply, function, seconds);
  return reply;
}

}  // namespace ropecheck
