// ggml's CPU backend as a user of the prebuilt llama.cpp libraries gets it: the release ships one
// libggml-cpu-<level>.so per x86 level (some need AVX-512), and ggml's loader scores each against
// this CPU and loads the best that runs here; ROPECHECK_GGML_CPU=<level> forces one (to compare
// levels, or to reproduce another machine's choice). The thread pool is made once, as
// llama.cpp's context makes it, and each graph then runs at the call's thread count.
#pragma once

#include <string>

#include "ggml-backend.h"
#include "ggml.h"

namespace ropecheck_ggml_peer {

class CpuBackend {
 public:
  // Loads the backend from the directory that holds libggml-base.so; max_threads: the largest
  // thread count any call will ask for. On failure, backend() is null and error() says why.
  explicit CpuBackend(int max_threads);
  ~CpuBackend();
  CpuBackend(const CpuBackend&) = delete;
  CpuBackend& operator=(const CpuBackend&) = delete;

  ggml_backend_t backend() const { return backend_; }
  const std::string& error() const { return error_; }
  // "ggml 0.25.1 (0ad4a86) CPU backend libggml-cpu-haswell.so [AVX2 FMA F16C ...], pool of 2 threads"
  const std::string& description() const { return description_; }

  void set_threads(int threads);  // the thread count of the next graph_compute

 private:
  ggml_backend_t backend_ = nullptr;
  ggml_threadpool_t pool_ = nullptr;
  void (*threadpool_free_)(ggml_threadpool_t) = nullptr;
  ggml_backend_set_n_threads_t set_n_threads_ = nullptr;
  int threads_ = 0;
  std::string error_, description_;
};

}  // namespace ropecheck_ggml_peer
