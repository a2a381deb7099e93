// run_jobs_in_processes() (verify_processes.h). Each worker is a fork of this process with one
// Unix socket to it: the parent sends a job index, the worker runs that job and answers with its
// results as one JSON message (a 4-byte length, then the text), and waits for the next index; the
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
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>

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

// Doubles travel as their bits: exact, and an infinite error / bound ratio (a mutant's) is not
// JSON's null.
std::uint64_t bits_of(double d) { return std::bit_cast<std::uint64_t>(d); }
double double_of(const nlohmann::json& j) { return std::bit_cast<double>(j.get<std::uint64_t>()); }

nlohmann::json to_wire(const PropertyResult& r) {
  return {{"subject", r.subject},
          {"property", r.property},
          {"status", static_cast<int>(r.status)},
          {"cases", r.cases},
          {"worst_ratio", bits_of(r.worst_ratio)},
          {"worst_error", bits_of(r.worst_error)},
          {"bound", bits_of(r.bound)},
          {"units", r.units},
          {"message", r.message},
          {"counterexample", r.counterexample},
          {"reproduce", r.reproduce},
          {"seconds", bits_of(r.seconds)}};
}

PropertyResult from_wire(const nlohmann::json& j) {
  PropertyResult r;
  r.subject = j.at("subject").get<std::string>();
  r.property = j.at("property").get<std::string>();
  r.status = static_cast<Status>(j.at("status").get<int>());
  r.cases = j.at("cases").get<int>();
  r.worst_ratio = double_of(j.at("worst_ratio"));
  r.worst_error = double_of(j.at("worst_error"));
  r.bound = double_of(j.at("bound"));
  r.units = j.at("units").get<std::string>();
  r.message = j.at("message").get<std::string>();
  r.counterexample = j.at("counterexample").get<std::string>();
  r.reproduce = j.at("reproduce").get<std::string>();
  r.seconds = double_of(j.at("seconds"));
  return r;
}

// The worker: jobs until kStop or until the parent is gone. It leaves by _exit: the parent's
// objects it inherited (open plugins among them) belong to the parent, and so does the output.
[[noreturn]] void worker_main(const VerifyPlan& plan, int channel) {
  for (;;) {
    std::uint32_t index = kStop;
    if (!receive_all(channel, &index, sizeof index) || index == kStop) _exit(0);
    nlohmann::json reply = {{"job", index}};
    try {
      nlohmann::json results = nlohmann::json::array();
      for (const auto& r : run_job(plan, index)) results.push_back(to_wire(r));
      reply["results"] = std::move(results);
    } catch (const InvalidInput& e) {
      reply["invalid_input"] = e.what();
    } catch (const std::exception& e) {
      reply["error"] = e.what();
    }
    // Invalid UTF-8 in a message (a plugin's bytes) is replaced, not thrown.
    if (!send_message(channel, reply.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))) _exit(1);
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
      const auto reply = nlohmann::json::parse(*text);
      w.job.reset();
      if (reply.contains("invalid_input")) throw InvalidInput(reply["invalid_input"].get<std::string>());
      if (reply.contains("error")) throw std::runtime_error(reply["error"].get<std::string>());
      for (const auto& r : reply.at("results")) results[index].push_back(from_wire(r));
    }
    if (!here.empty()) {
      results[here.front()] = run_job(plan, here.front());
      here.pop_front();
    }
  }
  return results;
}

}  // namespace ropecheck
