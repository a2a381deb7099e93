#include "core/thread_team.h"

#include <algorithm>
#include <exception>
#include <thread>
#include <vector>

namespace ropecheck {

void run_team(int threads, const std::function<void(int member)>& work) {
  const int members = std::max(1, threads);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(members));
  const auto run = [&](int member) {
    try {
      work(member);
    } catch (...) {
      errors[static_cast<std::size_t>(member)] = std::current_exception();
    }
  };
  {
    std::vector<std::jthread> helpers;
    helpers.reserve(static_cast<std::size_t>(members - 1));
    for (int member = 1; member < members; ++member) helpers.emplace_back(run, member);
    run(0);
  }  // joined here
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace ropecheck
