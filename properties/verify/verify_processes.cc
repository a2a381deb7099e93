// run_jobs_in_processes() (verify_processes.h). Each worker is a fork of this process with one
// Unix socket to it: the parent sends a job index, the worker runs that job and answers with its
// results as one message (a 4-byte length, then the bytes), and waits for the next index; the
// index kStop ends it. The parent hands out jobs as workers answer (subjects differ in cost by
// 100x), runs the plugins' subjects itself meanwhile, and puts every answer in plan order.
#include "properties/verify/verify_processes.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <type_traits>

#include "core/errors.h"
#include "properties/verify/verify_run.h"

namespace ropecheck {
namespace {

constexpr std::uint32_t kStop = 0xFFFFFFFFu;

bool send_all(int fd, const void* data, std::size_t bytes) {
  const auto* at = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t sent = send(fd, at, bytes, MSG_NOSIGNAL);  // a dead peer: an error, not SIGPIPE
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    at += sent;
    bytes -= static_cast<std::size_t>(sent);
  }
  return true;
}

// False at end of file (the peer is gone) or on an error.
bool receive_all(int fd, void* data, std::size_t bytes) {
  auto* at = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t got = recv(fd, at, bytes, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    at += got;
    bytes -= static_cast<std::size_t>(got);
  }
  return true;
}

bool send_message(int fd, const std::string& text) {
  const auto length = static_cast<std::uint32_t>(text.size());
  return send_all(fd, &length, sizeof length) && send_all(fd, text.data(), text.size());
}

std::optional<std::string> receive_message(int fd) {
  std::uint32_t length = 0;
  if (!receive_all(fd, &length, sizeof length)) return std::nullopt;
  std::string text(length, '\0');
  if (!receive_all(fd, text.data(), length)) return std::nullopt;
  return text;
}

// The wire format of a worker's answer to the job it was sent: a kind, then the result count and
// each result's fields in declaration order (or the exception's text); a string as its length and
// bytes, a number as its bytes (exact, and an infinite error ratio stays infinite). Both ends
// are the same binary.
enum class Answer : std::uint8_t { results, invalid_input, error };

class WireWriter {
 public:
  template <typename T>
  void number(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  void text(const std::string& value) {
    number(static_cast<std::uint32_t>(value.size()));
    bytes_ += value;
  }
  void result(const PropertyResult& r) {
    text(r.subject);
    text(r.property);
    number(static_cast<int>(r.status));
    number(r.cases);
    number(r.worst_ratio);
    number(r.worst_error);
    number(r.bound);
    text(r.units);
    text(r.message);
    text(r.counterexample);
    text(r.reproduce);
    number(r.seconds);
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

class WireReader {
 public:
  explicit WireReader(const std::string& bytes) : bytes_(bytes) {}
  template <typename T>
  T number() {
    T value;
    std::memcpy(&value, take(sizeof value), sizeof value);
    return value;
  }
  std::string text() {
    const auto length = number<std::uint32_t>();
    return std::string(take(length), length);
  }
  PropertyResult result() {
    PropertyResult r;
    r.subject = text();
    r.property = text();
    r.status = static_cast<Status>(number<int>());
    r.cases = number<int>();
    r.worst_ratio = number<double>();
    r.worst_error = number<double>();
    r.bound = number<double>();
    r.units = text();
    r.message = text();
    r.counterexample = text();
    r.reproduce = text();
    r.seconds = number<double>();
    return r;
  }

 private:
  const char* take(std::size_t n) {
    if (n > bytes_.size() - at_) throw std::runtime_error("a verify worker's answer is truncated");
    const char* start = bytes_.data() + at_;
    at_ += n;
    return start;
  }
  const std::string& bytes_;
  std::size_t at_ = 0;
};

// The worker: jobs until kStop or until the parent is gone. It leaves by _exit: the parent's
// objects it inherited (open plugins among them) belong to the parent, and so does the output.
[[noreturn]] void worker_main(const VerifyPlan& plan, int channel) {
  for (;;) {
    std::uint32_t index = kStop;
    if (!receive_all(channel, &index, sizeof index) || index == kStop) _exit(0);
    WireWriter answer;
    try {
      const auto results = run_job(plan, index);
      answer.number(Answer::results);
      answer.number(static_cast<std::uint32_t>(results.size()));
      for (const auto& r : results) answer.result(r);
    } catch (const InvalidInput& e) {
      answer = WireWriter();
      answer.number(Answer::invalid_input);
      answer.text(e.what());
    } catch (const std::exception& e) {
      answer = WireWriter();
      answer.number(Answer::error);
      answer.text(e.what());
    }
    if (!send_message(channel, answer.bytes())) _exit(1);
  }
}

struct Worker {
  pid_t pid = -1;
  int channel = -1;
  std::optional<std::size_t> job;  // the job it is running
};

std::string exit_description(int status) {
  if (WIFSIGNALED(status)) {
    const char* name = sigabbrev_np(WTERMSIG(status));
    return name != nullptr ? fmt::format("killed by SIG{}", name) : fmt::format("killed by signal {}", WTERMSIG(status));
  }
  return fmt::format("exit status {}", WEXITSTATUS(status));
}

// Forks the workers; stops and reaps them when it goes out of scope (also on an exception).
class WorkerPool {
 public:
  WorkerPool(const VerifyPlan& plan, int count) {
    std::fflush(nullptr);  // or a worker could write this process's buffered output again
    for (int i = 0; i < count; ++i) {
      int fds[2];
      if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
        throw std::system_error(errno, std::generic_category(), "socketpair for a verify worker");
      }
      const pid_t pid = fork();
      if (pid < 0) {
        const int error = errno;
        close(fds[0]);
        close(fds[1]);
        throw std::system_error(error, std::generic_category(), "fork of a verify worker");
      }
      if (pid == 0) {
        close(fds[0]);
        for (const auto& w : workers_) close(w.channel);  // the earlier workers' parent ends
        worker_main(plan, fds[1]);
      }
      close(fds[1]);
      workers_.push_back({pid, fds[0], std::nullopt});
    }
  }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  ~WorkerPool() {
    for (auto& w : workers_) {
      if (w.pid <= 0) continue;
      if (w.job) {
        kill(w.pid, SIGKILL);  // leaving early (an exception): nothing it runs is wanted
      } else {
        send_all(w.channel, &kStop, sizeof kStop);
      }
      close(w.channel);
      int status = 0;
      while (waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
  }

  std::vector<Worker>& workers() { return workers_; }

  // A worker whose channel closed: reaped, and how it ended.
  std::string reap(Worker& w) {
    close(w.channel);
    int status = 0;
    while (waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
    }
    w.pid = -1;
    w.channel = -1;
    return exit_description(status);
  }

 private:
  std::vector<Worker> workers_;
};

std::vector<PropertyResult> died_results(const VerifyJob& job, const std::string& how) {
  std::vector<PropertyResult> results;
  for (const Property* property : job.properties) {
    PropertyResult r;
    r.subject = job.subject.id;
    r.property = std::string(property->id);
    r.status = Status::failed;
    r.message = fmt::format("the verify worker process running this subject died ({})", how);
    results.push_back(std::move(r));
  }
  return results;
}

bool runs_here(const Subject& subject) {
  return subject.rope != nullptr && subject.rope->capabilities().out_of_process;
}

}  // namespace

std::vector<std::vector<PropertyResult>> run_jobs_in_processes(const VerifyPlan& plan, int processes) {
  std::vector<std::vector<PropertyResult>> results(plan.jobs.size());
  std::deque<std::size_t> queued, here;
  for (std::size_t i = 0; i < plan.jobs.size(); ++i) (runs_here(plan.jobs[i].subject) ? here : queued).push_back(i);
  WorkerPool pool(plan, std::min<int>(processes, static_cast<int>(queued.size())));
  auto& workers = pool.workers();
  const auto busy = [&] {
    for (const auto& w : workers) {
      if (w.job) return true;
    }
    return false;
  };
  const auto alive = [&] {
    for (const auto& w : workers) {
      if (w.pid > 0) return true;
    }
    return false;
  };
  while (!queued.empty() || !here.empty() || busy()) {
    for (auto& w : workers) {
      if (w.pid <= 0 || w.job || queued.empty()) continue;
      const auto index = static_cast<std::uint32_t>(queued.front());
      if (send_all(w.channel, &index, sizeof index)) {
        w.job = queued.front();
        queued.pop_front();
      } else {
        pool.reap(w);
      }
    }
    if (!alive() && !queued.empty()) {  // every worker died: the rest here
      here.insert(here.end(), queued.begin(), queued.end());
      queued.clear();
    }
    std::vector<pollfd> waiting;
    for (const auto& w : workers) {
      if (w.job) waiting.push_back({w.channel, POLLIN, 0});
    }
    // With subjects of its own left, this process only looks for answers; else it waits for one.
    if (!waiting.empty() && poll(waiting.data(), waiting.size(), here.empty() ? -1 : 0) < 0 && errno != EINTR) {
      throw std::system_error(errno, std::generic_category(), "poll of the verify workers");
    }
    for (const auto& ready : waiting) {
      if (ready.revents == 0) continue;
      auto& w = *std::find_if(workers.begin(), workers.end(),
                              [&](const Worker& x) { return x.channel == ready.fd; });
      const std::size_t index = *w.job;
      const auto text = receive_message(w.channel);
      if (!text) {
        w.job.reset();
        results[index] = died_results(plan.jobs[index], pool.reap(w));
        continue;
      }
      w.job.reset();
      WireReader answer(*text);
      switch (answer.number<Answer>()) {
        case Answer::invalid_input: throw InvalidInput(answer.text());
        case Answer::error: throw std::runtime_error(answer.text());
        case Answer::results: break;
      }
      const auto count = answer.number<std::uint32_t>();
      for (std::uint32_t r = 0; r < count; ++r) results[index].push_back(answer.result());
    }
    if (!here.empty()) {
      results[here.front()] = run_job(plan, here.front());
      here.pop_front();
    }
  }
  return results;
}

}  // namespace ropecheck
