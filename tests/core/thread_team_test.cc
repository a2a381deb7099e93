// run_team: every member runs once, on its own thread but member 0, and a member's exception
// reaches the caller after every member is done.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/thread_team.h"

namespace ropecheck {
namespace {

TEST(ThreadTeam, EveryMemberRunsOnceAndMemberZeroOnTheCaller) {
  for (const int threads : {1, 2, 3, 7}) {
    std::vector<std::atomic<int>> runs(static_cast<std::size_t>(threads));
    std::vector<std::thread::id> where(static_cast<std::size_t>(threads));
    run_team(threads, [&](int member) {
      runs[static_cast<std::size_t>(member)].fetch_add(1);
      where[static_cast<std::size_t>(member)] = std::this_thread::get_id();
    });
    for (int m = 0; m < threads; ++m) EXPECT_EQ(runs[static_cast<std::size_t>(m)].load(), 1) << m << " of " << threads;
    EXPECT_EQ(where[0], std::this_thread::get_id());
    for (int m = 1; m < threads; ++m) EXPECT_NE(where[static_cast<std::size_t>(m)], std::this_thread::get_id()) << m;
  }
}

TEST(ThreadTeam, NoMembersAskedRunsOne) {
  int runs = 0;
  run_team(0, [&](int member) { runs += member == 0; });
  EXPECT_EQ(runs, 1);
}

TEST(ThreadTeam, AMembersExceptionReachesTheCallerAfterEveryMemberIsDone) {
  std::atomic<int> finished{0};
  try {
    run_team(4, [&](int member) {
      if (member == 2) throw std::runtime_error("member 2 failed");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      finished.fetch_add(1);
    });
    ADD_FAILURE() << "the exception was lost";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "member 2 failed");
  }
  EXPECT_EQ(finished.load(), 3);  // the others ran to the end before the rethrow
}

}  // namespace
}  // namespace ropecheck
