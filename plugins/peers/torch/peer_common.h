// What the PyTorch peers share: the thread pin, the exception boundary, wrapping the caller's
// buffers as tensors, and the backward pass through autograd. Not part of the plugin ABI
// (plugins/include/ropecheck/plugin.h): each peer is an ordinary ABI 4 plugin; these are
// conveniences of this directory.
#pragma once

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/autograd.h>

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "ropecheck/plugin.h"

extern "C" void openblas_set_num_threads(int);  // torch's BLAS on Debian 12 (libblas.so.3)

namespace ropecheck_torch_peer {

// Threads. The peers run the thread count the host gives through the environment, whatever a
// call's `threads` allows (plugin.h: "at most"): PyTorch's results move by an ulp from one thread
// count to another (torch_hf_mrope.cc), which call_history_independence would fail on. That is
// ROPECHECK_PLUGIN_THREADS=N, set by `ropecheck bench` before it forks the plugin worker
// (bench_command.cc: the benchmark thread count at which plugin cases are timed), inherited by
// the worker. Read on every call (getenv is a few ns); unset or invalid: 1. Both
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

// The backward pass (ABI 4) as a training step gets it from PyTorch: the peer's forward ops run on
// leaf tensors that require grad, and torch::autograd::grad gives the gradient of the outputs for
// the grad_outputs dy, which is written over dy. Each of `dys` is a [1, T, H, D] tensor over the
// caller's dy buffer; `forward(leaf)` returns the rotated tensor in the leaf's shape. The leaves
// hold dy's own values (no copy): RoPE is linear, so its gradient does not depend on them, and
// autograd saves only cos and sin. The forward is recorded on every call (the positions and the
// spec are the call's): its time is part of the backward's, as under activation checkpointing.
template <typename Forward>
void backward_through_autograd(const std::vector<at::Tensor>& dys, Forward forward) {
  const at::AutoGradMode enabled(true);
  std::vector<at::Tensor> leaves, outputs, grad_outputs;
  for (const at::Tensor& dy : dys) {
    if (dy.numel() == 0) continue;  // k_heads == 0: q alone
    leaves.push_back(dy.detach().requires_grad_(true));
    outputs.push_back(forward(leaves.back()));
    grad_outputs.push_back(dy);
  }
  const std::vector<at::Tensor> dx = torch::autograd::grad(outputs, leaves, grad_outputs);
  std::size_t next = 0;
  for (const at::Tensor& dy : dys) {
    if (dy.numel() != 0) dy.copy_(dx[next++]);  // dx over dy: the ABI's in place
  }
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
