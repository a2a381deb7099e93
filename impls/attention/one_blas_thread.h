// OpenBLAS held to one thread while a team of our own threads runs sgemms (attention's tasks, or
// the bench's sgemm limit shared the same way): OpenBLAS's own split of a 128-row block's sgemm
// does not scale, and its pool, left running, spins beside the team.
#pragma once

namespace ropecheck {

// OpenBLAS at one thread while it lives, then back to its count before. Process-wide: holders on
// several threads at once, or nested, hold it together and the last one out restores it.
// park_pool: also end OpenBLAS's idle pool threads for the hold (restoring the count starts them
// again: a thread start and join, ~0.1 ms, once per outermost hold). OpenBLAS ends its pool
// assuming it idle: no other thread may be inside a threaded OpenBLAS call meanwhile (in this
// project every sgemm runs on a holder's thread or its team).
class OneBlasThread {
 public:
  explicit OneBlasThread(bool park_pool);
  ~OneBlasThread();
  OneBlasThread(const OneBlasThread&) = delete;
  OneBlasThread& operator=(const OneBlasThread&) = delete;
};

}  // namespace ropecheck
