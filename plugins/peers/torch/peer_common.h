// What both PyTorch peers share: the thread pin, the exception boundary, and wrapping the
// caller's buffers as tensors. Not part of the plugin ABI (plugins/include/ropecheck/plugin.h): each
// peer is an ordinary ABI v1 plugin; these are conveniences of this directory.
#pragma once

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <string>

#include "ropecheck/plugin.h"

extern "C" void openblas_set_num_threads(int);  // torch's BLAS on Debian 12 (libblas.so.3)

namespace ropecheck_torch_peer {

// Threads. The plugin ABI has no thread count (and stays unchanged), so the host says it through
// the environment: ROPECHECK_PLUGIN_THREADS=N, set by `ropecheck bench` before it forks the
// plugin worker (bench_command.cc: the benchmark thread count at which plugin cases are timed),
// inherited by the worker. Read on every call (getenv is a few ns); unset or invalid: 1. Both
// torch's intra-op pool (OpenMP in Debian's build) and OpenBLAS's are pinned to it, and only in
// the worker: the host never loads libtorch, so torch's pool is first created after the fork.
inline void pin_threads() {
  int wanted = 1;
  if (const char* env = std::getenv("ROPECHECK_PLUGIN_THREADS")) {
    char* end = nullptr;
    const long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n >= 1 && n <= 256) wanted = static_cast<int>(n);
  }
  static int pinned = 0;
  if (pinned != wanted) {
    at::set_num_threads(wanted);
    openblas_set_num_threads(wanted);
    pinned = wanted;
  }
}

// One [tokens][heads][head_dim] fp32 buffer as a [1, tokens, heads, head_dim] tensor over the
// caller's memory (no copy): the (bsz, seqlen, n_heads, head_dim) shape both frameworks start
// from. heads may be 0 (q only): an empty tensor that nothing reads or writes.
inline at::Tensor wrap(float* data, std::int64_t tokens, std::int64_t heads, std::int64_t head_dim) {
  return at::from_blob(data, {1, tokens, heads, head_dim}, at::TensorOptions().dtype(at::kFloat));
}

inline at::Tensor wrap_positions(const std::int64_t* positions, std::int64_t tokens) {
  // from_blob wants a mutable pointer; nothing below writes positions (the host checks it).
  return at::from_blob(const_cast<std::int64_t*>(positions), {1, tokens},
                       at::TensorOptions().dtype(at::kLong));
}

// The ABI boundary: nothing thrown may cross into the C caller.
template <typename Body>
std::int32_t guarded(Body body) noexcept {
  try {
    pin_threads();
    return body();
  } catch (...) {
    return ROPECHECK_PLUGIN_ERROR;
  }
}

}  // namespace ropecheck_torch_peer
