#include "core/thread_team.h"

#include <algorithm>
#include <exception>
#include <thread>
#include <vector>

#include "core/machine_info.h"

namespace ropecheck {

int team_threads(int members) {
  static const int cpus = usable_cpus();  // the affinity a process starts with (taskset, the gate's pinning)
  return std::clamp(cpus, 1, std::max(1, members));
}

void run_team(int threads, const std::function<void(int member)>& work) {
  const int members = std::max(1, threads);
  const int workers = team_threads(members);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(members));
  const auto run_turns = [&](int first) {
    for (int member = first; member < members; member += workers) {
      try {
        work(member);
      } catch (...) {
        errors[static_cast<std::size_t>(member)] = std::current_exception();
      }
    }
  };
  {
    std::vector<std::jthread> helpers;
    helpers.reserve(static_cast<std::size_t>(workers - 1));
    for (int worker = 1; worker < workers; ++worker) helpers.emplace_back(run_turns, worker);
    run_turns(0);
  }  // joined here
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace ropecheck
