// The child side of a plugin: what a forked worker runs (plugin_worker.cc). It loads the library,
// sends one LoadReport on `channel`, then serves CallMessages on the shared memory file
// `memory_fd` until the host closes the channel. Never returns: it ends with _exit().
// max_threads: what an ABI 2 plugin's init is told no call will exceed.
#pragma once

namespace ropecheck {

[[noreturn]] void run_plugin_worker(int channel, int memory_fd, const char* path, int max_threads);

}  // namespace ropecheck
