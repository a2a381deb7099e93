// WorkerProcess (plugin_process.h): fork, request/reply with a deadline, and the wording of a
// worker's death. fork() rather than exec of a worker binary: any host (ropecheck, a test, a
// benchmark) can then run plugins, and ASan builds need nothing extra.
#include "plugins/host/plugin_process.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <system_error>
#include <thread>

#include "plugins/host/plugin_worker.h"
#include "plugins/host/plugin_host.h"

namespace ropecheck {
namespace {

constexpr double kLoadTimeoutSeconds = 120.0;

using Clock = std::chrono::steady_clock;

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* text = strsignal(sig);
  return abbrev != nullptr ? fmt::format("SIG{} ({})", abbrev, text != nullptr ? text : "")
                           : fmt::format("signal {}", sig);
}

}  // namespace

WorkerProcess::WorkerProcess(const std::filesystem::path& path, int memory_fd,
                             double timeout_seconds, int max_threads)
    : timeout_seconds_(timeout_seconds) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) {
    throw std::system_error(errno, std::generic_category(), "socketpair for a plugin worker");
  }
  const std::string path_text = path.string();  // before fork: the child must not allocate
  std::fflush(nullptr);  // or the child could write the host's buffered output a second time
  pid_ = fork();
  if (pid_ < 0) {
    const int error = errno;
    close(fds[0]);
    close(fds[1]);
    throw std::system_error(error, std::generic_category(), "fork of a plugin worker");
  }
  if (pid_ == 0) {
    close(fds[0]);
    run_plugin_worker(fds[1], memory_fd, path_text.c_str(), max_threads);
  }
  close(fds[1]);
  channel_ = fds[0];
  // Loading gets at least kLoadTimeoutSeconds: the timeout is for a kernel call, while dlopen of a
  // framework (libtorch and ~200 libraries behind it) from a cold disk cache took over 10 s on a
  // fresh machine. A plugin that hangs while loading is still killed, only later.
  receive(&report_, sizeof report_, "loading", std::max(timeout_seconds_, kLoadTimeoutSeconds));
}

WorkerProcess::~WorkerProcess() {
  if (pid_ > 0) reap(false);
}

void WorkerProcess::reap(bool kill_first) {
  if (channel_ >= 0) {
    close(channel_);  // a live worker reads EOF and exits
    channel_ = -1;
  }
  if (kill_first) kill(pid_, SIGKILL);
  // A worker that ignores EOF (stuck in a plugin destructor) gets a second, then SIGKILL.
  const auto deadline = Clock::now() + std::chrono::seconds(1);
  int status = 0;
  while (waitpid(pid_, &status, WNOHANG) == 0) {
    if (Clock::now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  pid_ = -1;
}

plugin_protocol::ReplyMessage WorkerProcess::exchange(const plugin_protocol::CallMessage& message,
                                                      std::string_view function, double seconds) {
  if (pid_ <= 0) throw PluginFailure("plugin worker is gone");
  const ssize_t sent = send(channel_, &message, sizeof message, MSG_NOSIGNAL);
  if (sent != static_cast<ssize_t>(sizeof message)) fail_dead(function);
  plugin_protocol::ReplyMessage reply;
  receive(&reply, sizeof reply, function, seconds);
  return reply;
}

void WorkerProcess::receive(void* message, std::size_t bytes, std::string_view during,
                            double seconds) {
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(seconds));
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() < 0) fail_silent(during, seconds);
    pollfd waiting{channel_, POLLIN, 0};
    const int ready = poll(&waiting, 1, static_cast<int>(left.count()) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      if (Clock::now() >= deadline) fail_silent(during, seconds);
      continue;
    }
    const ssize_t got = recv(channel_, message, bytes, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got != static_cast<ssize_t>(bytes)) fail_dead(during);  // EOF: the worker has died
    return;
  }
}

void WorkerProcess::fail_silent(std::string_view during, double seconds) {
  reap(true);
  throw PluginHang(fmt::format("plugin did not answer within {:.3g} s ({}); the worker was killed",
                               seconds, during));
}

void WorkerProcess::fail_dead(std::string_view during) {
  if (channel_ >= 0) {
    close(channel_);
    channel_ = -1;
  }
  // The channel closed: the worker is dead or dying. Wait for its status (bounded: a worker
  // that closed the channel but lives on is killed at the deadline).
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(timeout_seconds_));
  int status = 0;
  pid_t done = 0;
  while ((done = waitpid(pid_, &status, WNOHANG)) == 0 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (done == 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    pid_ = -1;
    throw PluginFailure(fmt::format("plugin worker closed its channel ({}) and was killed", during));
  }
  pid_ = -1;
  if (WIFSIGNALED(status)) {
    throw PluginFailure(fmt::format("plugin crashed with {} ({})", signal_name(WTERMSIG(status)),
                                    during));
  }
  throw PluginFailure(fmt::format("plugin worker exited with status {} ({}): the plugin called "
                                  "exit() or a sanitizer stopped it",
                                  WIFEXITED(status) ? WEXITSTATUS(status) : -1, during));
}

}  // namespace ropecheck
