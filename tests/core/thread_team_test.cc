// run_team: every member runs once, member m on thread m % team_threads (member 0 on the caller,
// members on different threads at once), and a member's exception reaches the caller after every
// member is done.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/machine_info.h"
#include "core/thread_team.h"

namespace ropecheck {
namespace {

TEST(ThreadTeam, AsManyThreadsAsMembersUpToTheCpus) {
  EXPECT_EQ(team_threads(0), 1);
  EXPECT_EQ(team_threads(1), 1);
  EXPECT_EQ(team_threads(usable_cpus()), usable_cpus());
  EXPECT_EQ(team_threads(usable_cpus() + 7), usable_cpus());
  if (usable_cpus() > 1) {
    EXPECT_EQ(team_threads(2), 2);
  }
}

TEST(ThreadTeam, EveryMemberRunsOnceMembersPastTheCpusTakingTurns) {
  for (const int threads : {1, 2, 3, 7, 13, 32}) {
    const int workers = team_threads(threads);
    std::vector<std::atomic<int>> runs(static_cast<std::size_t>(threads));
    std::vector<std::thread::id> where(static_cast<std::size_t>(threads));
    run_team(threads, [&](int member) {
      runs[static_cast<std::size_t>(member)].fetch_add(1);
      where[static_cast<std::size_t>(member)] = std::this_thread::get_id();
    });
    for (int m = 0; m < threads; ++m) {
      EXPECT_EQ(runs[static_cast<std::size_t>(m)].load(), 1) << m << " of " << threads;
      // The same thread as the member a turn before it, another than its neighbours'.
      if (m >= workers) {
        EXPECT_EQ(where[static_cast<std::size_t>(m)], where[static_cast<std::size_t>(m - workers)]) << m;
      }
      if (m % workers != 0) {
        EXPECT_NE(where[static_cast<std::size_t>(m)], where[0]) << m;
      }
    }
    EXPECT_EQ(where[0], std::this_thread::get_id());
  }
}

TEST(ThreadTeam, NoMembersAskedRunsOne) {
  int runs = 0;
  run_team(0, [&](int member) { runs += member == 0; });
  EXPECT_EQ(runs, 1);
}

TEST(ThreadTeam, AMembersExceptionReachesTheCallerAfterEveryMemberIsDone) {
  for (const int threads : {4, 9}) {  // on threads of their own, and taking turns past the CPUs
    std::atomic<int> finished{0};
    try {
      run_team(threads, [&](int member) {
        if (member == 2) throw std::runtime_error("member 2 failed");
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        finished.fetch_add(1);
      });
      ADD_FAILURE() << "the exception was lost";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "member 2 failed");
    }
    EXPECT_EQ(finished.load(), threads - 1);  // the others ran to the end before the rethrow
  }
}

}  // namespace
}  // namespace ropecheck
