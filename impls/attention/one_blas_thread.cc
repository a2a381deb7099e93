#include "impls/attention/one_blas_thread.h"

#include <cblas.h>
#include <dlfcn.h>

#include <mutex>

namespace ropecheck {
namespace {

std::mutex hold_mutex;
int holders = 0;             // OneBlasThread objects alive
int threads_before = 1;      // OpenBLAS's count when the first of them was made
bool pool_parked = false;    // in this hold

// OpenBLAS's pool threads spin (sched_yield) for about 2^28 cycles after each threaded call
// before they sleep: beside a team on every core they take a core's share (Zen 4, 2 cores: 20%
// of the time in sched_yield; attention's 2-thread case ran 0.55-0.59 or 0.78-0.95 of its probe
// from one process to the next). OpenBLAS's threaded builds export blas_thread_shutdown_, which
// ends the pool; openblas_set_num_threads, or the next threaded call, starts it again. A build
// without it (serial) has no pool.
void park_pool() {
  using Shutdown = int (*)();
  static const auto shutdown = reinterpret_cast<Shutdown>(dlsym(RTLD_DEFAULT, "blas_thread_shutdown_"));
  if (shutdown != nullptr) shutdown();
}

}  // namespace

OneBlasThread::OneBlasThread(bool park) {
  const std::lock_guard lock(hold_mutex);
  if (holders++ == 0) {
    threads_before = openblas_get_num_threads();
    openblas_set_num_threads(1);
  }
  if (park && !pool_parked) {
    park_pool();
    pool_parked = true;
  }
}

OneBlasThread::~OneBlasThread() {
  const std::lock_guard lock(hold_mutex);
  if (--holders == 0) {
    openblas_set_num_threads(threads_before);
    pool_parked = false;
  }
}

}  // namespace ropecheck
