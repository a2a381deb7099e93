// A team of threads for one call: work(0) on the calling thread, work(1) .. work(threads - 1) on
// helpers started for the call and joined before it returns. What the kernels' token split and
// attention's row blocks share; how a member finds its share of the work is the caller's.
#pragma once

#include <functional>

namespace ropecheck {

// Returns when every member is done. An exception thrown by a member (a bad_alloc) is rethrown
// here after every join, the lowest member's first; threads < 1 runs one member.
void run_team(int threads, const std::function<void(int member)>& work);

}  // namespace ropecheck
