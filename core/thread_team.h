// A team of threads for one call: work(0) .. work(threads - 1), each member once, on the calling
// thread and helpers started for the call and joined before it returns. What the kernels' token
// split and attention's row blocks share; how a member finds its share of the work is the caller's.
#pragma once

#include <functional>

namespace ropecheck {

// The threads run_team runs `members` on: as many as the members, at most the CPUs this process
// may use. Members past the CPUs take turns (member m on thread m % team_threads, member 0 on the
// caller): a split into 13 chunks is the same split on 2 cores, and 12 threads started and
// joined for a call that 2 CPUs run cost more than the call (verify asks for such counts on
// purpose: a split's arithmetic is judged whatever the machine).
int team_threads(int members);

// Returns when every member is done. An exception thrown by a member (a bad_alloc) is rethrown
// here after every member ran, the lowest member's first; threads < 1 runs one member.
void run_team(int threads, const std::function<void(int member)>& work);

}  // namespace ropecheck
