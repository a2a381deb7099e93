// A forked child with one SOCK_SEQPACKET channel to it, from the parent's side: what a plugin
// worker (plugin_process.h) and a Python worker (python_process.h) both are. Messages keep their
// boundaries; a wait has a deadline; the child's death or silence becomes a PluginFailure or
// PluginHang that says what happened ("<noun> crashed with SIGSEGV (apply)").
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace ropecheck {

// A worker's load (dlopen of a plugin, an interpreter importing a framework) is awaited at least
// this long: the timeout is for a kernel call, while dlopen of libtorch and ~200 libraries behind
// it from a cold disk cache took over 10 s on a fresh machine. One that hangs while loading is
// still killed, only later.
inline constexpr double kLoadTimeoutSeconds = 120.0;

class ChildChannel {
 public:
  // What the child runs after fork: never returns (it execs or _exit()s). It must not allocate:
  // the parent may be multi-threaded.
  using Body = void (*)(int channel, const void* context);

  // Forks the child running body(channel, context). noun names it in messages ("plugin",
  // "Python function"); exit_seconds: how long a child that closed its channel is awaited.
  ChildChannel(Body body, const void* context, std::string noun, double exit_seconds);
  ~ChildChannel();  // closes the channel (the child then exits) and reaps it
  ChildChannel(const ChildChannel&) = delete;
  ChildChannel& operator=(const ChildChannel&) = delete;

  bool alive() const { return pid_ > 0; }
  const std::string& noun() const { return noun_; }

  // Sends one message; a dead child is a PluginFailure naming `during`.
  void send(const void* message, std::size_t bytes, std::string_view during);
  // Waits up to `seconds` for one message of at most `capacity` bytes and returns its size.
  // PluginHang past the wait (the child is killed and reaped first), PluginFailure when it died.
  std::size_t receive(void* message, std::size_t capacity, std::string_view during, double seconds);

  // Ends the child (killed first when kill_first) and reaps it; the object is then spent.
  void reap(bool kill_first);
  [[noreturn]] void fail_dead(std::string_view during);

 private:
  [[noreturn]] void fail_silent(std::string_view during, double seconds);

  pid_t pid_ = -1;
  int channel_ = -1;
  std::string noun_;
  double exit_seconds_;
};

// In the child: only the channel and one more descriptor stay open (the child must not hold the
// parent's files: another child's channel would then never see EOF when that child dies).
void close_other_files(int keep_a, int keep_b);
// In the child: a crash ends it by its own signal (the parent's handlers, ASan's for one, are
// inherited through fork), with no signal blocked.
void default_crash_signals();

}  // namespace ropecheck
