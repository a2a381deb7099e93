// ChildChannel (child_channel.h): fork, one message at a time with a deadline, and the wording of
// a child's death. Shared by the plugin worker (a fork that loads a library) and the Python
// worker (a fork that execs the user's interpreter).
#include "plugins/host/child_channel.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <system_error>
#include <thread>

#include "plugins/host/plugin_host.h"

namespace ropecheck {
namespace {

using Clock = std::chrono::steady_clock;

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* text = strsignal(sig);
  return abbrev != nullptr ? fmt::format("SIG{} ({})", abbrev, text != nullptr ? text : "")
                           : fmt::format("signal {}", sig);
}

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

ChildChannel::ChildChannel(Body body, const void* context, std::string noun, double exit_seconds)
    : noun_(std::move(noun)), exit_seconds_(exit_seconds) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) {
    throw std::system_error(errno, std::generic_category(), "socketpair for a " + noun_ + " worker");
  }
  std::fflush(nullptr);  // or the child could write the parent's buffered output a second time
  pid_ = fork();
  if (pid_ < 0) {
    const int error = errno;
    close(fds[0]);
    close(fds[1]);
    throw std::system_error(error, std::generic_category(), "fork of a " + noun_ + " worker");
  }
  if (pid_ == 0) {
    close(fds[0]);
    body(fds[1], context);
    _exit(127);  // a body that returned: never meant to
  }
  close(fds[1]);
  channel_ = fds[0];
}

ChildChannel::~ChildChannel() {
  if (pid_ > 0) reap(false);
}

void ChildChannel::reap(bool kill_first) {
  if (channel_ >= 0) {
    close(channel_);  // a live child reads EOF and exits
    channel_ = -1;
  }
  if (pid_ <= 0) return;
  if (kill_first) kill(pid_, SIGKILL);
  // A child that ignores EOF (stuck in a plugin destructor) gets a second, then SIGKILL.
  const auto deadline = after(1.0);
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

void ChildChannel::send(const void* message, std::size_t bytes, std::string_view during) {
  if (pid_ <= 0) throw PluginFailure(noun_ + " worker is gone");
  const ssize_t sent = ::send(channel_, message, bytes, MSG_NOSIGNAL);
  if (sent != static_cast<ssize_t>(bytes)) fail_dead(during);
}

std::size_t ChildChannel::receive(void* message, std::size_t capacity, std::string_view during, double seconds) {
  if (pid_ <= 0) throw PluginFailure(noun_ + " worker is gone");
  const auto deadline = after(seconds);
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
    const ssize_t got = recv(channel_, message, capacity, MSG_TRUNC);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0 || static_cast<std::size_t>(got) > capacity) fail_dead(during);  // EOF: it died
    return static_cast<std::size_t>(got);
  }
}

void ChildChannel::fail_silent(std::string_view during, double seconds) {
  reap(true);
  throw PluginHang(fmt::format("{} did not answer within {:.3g} s ({}); the worker was killed", noun_,
                               seconds, during));
}

void ChildChannel::fail_dead(std::string_view during) {
  if (channel_ >= 0) {
    close(channel_);
    channel_ = -1;
  }
  // The channel closed: the child is dead or dying. Wait for its status (bounded: a child that
  // closed the channel but lives on is killed at the deadline).
  const auto deadline = after(exit_seconds_);
  int status = 0;
  pid_t done = 0;
  while ((done = waitpid(pid_, &status, WNOHANG)) == 0 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (done == 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, &status, 0);
    pid_ = -1;
    throw PluginFailure(fmt::format("{} worker closed its channel ({}) and was killed", noun_, during));
  }
  pid_ = -1;
  if (WIFSIGNALED(status)) {
    throw PluginFailure(fmt::format("{} crashed with {} ({})", noun_, signal_name(WTERMSIG(status)), during));
  }
  throw PluginFailure(fmt::format("{} worker exited with status {} ({}): the {} called exit() or a "
                                  "sanitizer stopped it",
                                  noun_, WIFEXITED(status) ? WEXITSTATUS(status) : -1, during, noun_));
}

void default_crash_signals() {
  for (const int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS}) {
    struct sigaction action {};
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    sigaction(sig, &action, nullptr);
  }
  sigset_t all;
  sigemptyset(&all);
  sigprocmask(SIG_SETMASK, &all, nullptr);
}

void close_other_files(int keep_a, int keep_b) {
  const unsigned low = static_cast<unsigned>(keep_a < keep_b ? keep_a : keep_b);
  const unsigned high = static_cast<unsigned>(keep_a < keep_b ? keep_b : keep_a);
  const unsigned ranges[3][2] = {{3, low - 1}, {low + 1, high - 1}, {high + 1, ~0u}};
  for (const auto& range : ranges) {
    if (range[0] > range[1]) continue;
    if (close_range(range[0], range[1], 0) == 0) continue;
    // Kernels before 5.9 lack close_range: close one by one up to the descriptor limit.
    const long limit = sysconf(_SC_OPEN_MAX);
    const unsigned last = range[1] < static_cast<unsigned>(limit > 0 ? limit : 1024)
                              ? range[1]
                              : static_cast<unsigned>(limit > 0 ? limit : 1024);
    for (unsigned fd = range[0]; fd <= last && fd != ~0u; ++fd) close(static_cast<int>(fd));
  }
}

}  // namespace ropecheck
