// One call's ggml graph, built as a user of ggml builds it: a context holding tensor metadata,
// q and k as [head_dim, heads, tokens] tensors over the caller's memory (ggml_backend_cpu_buffer_
// from_ptr: no copy in or out), the positions as an int32 tensor, ggml_rope_ext_inplace on each
// (ggml_rope_ext's very op, its result a view of its input: the ABI rotates in place, llama.cpp
// builds the out-of-place form into a fresh tensor), one graph for both, computed by the CPU
// backend. A multi-axis call (ABI 3) is ggml_rope_multi_inplace's instead, on kGgmlAxes positions a
// token (ggml_rope_parameters.h). The backward pass (ABI 4) is ggml_rope_ext_back's graph
// (ggml_rope_multi_back's for a multi-axis call), on the same arguments: ggml's gradient op, the
// forward's kernel with the sine's sign flipped. It has no in-place form (its result is a fresh
// tensor), so the result is placed over dy's own memory: the kernel reads each pair before it
// writes it and copies the tail, the very access of the in-place forward's view, so dx comes out
// where dy was, with no copy.
//   RopeGraph::build(...) every call: what a user of the API pays per call (the "ggml" plugin);
//   RopeGraph::matches(...) then compute() alone: the graph reused while the spec, shape, dtype
//   and buffers are the same (the "ggml_compute" plugin: the kernel's own time).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ggml-backend.h"
#include "ggml.h"
#include "ggml_rope_parameters.h"
#include "ropecheck/plugin.h"

namespace ropecheck_ggml_peer {

enum class Pass { forward, backward };  // ggml_rope_ext(_inplace) or ggml_rope_ext_back

class RopeGraph {
 public:
  RopeGraph() = default;
  ~RopeGraph();
  RopeGraph(const RopeGraph&) = delete;
  RopeGraph& operator=(const RopeGraph&) = delete;

  // Builds the graph of `call`'s `pass` (q and k 32-byte aligned, fp32 or fp16). "" or why not.
  std::string build(const ropecheck_plugin_call& call, const RopeParameters& parameters, Pass pass);
  // True when `call`'s `pass` is what the graph was built for, but for the positions' values.
  bool matches(const ropecheck_plugin_call& call, Pass pass) const;
  // Writes the call's positions as int32 (ggml's position type) and computes the graph.
  bool compute(ggml_backend_t backend, const ropecheck_plugin_call& call);

 private:
  void release();

  ggml_context* context_ = nullptr;
  ggml_cgraph* graph_ = nullptr;
  ggml_backend_buffer_t buffers_[4] = {};  // q, k, positions, freq_factors
  std::vector<std::int32_t> positions_;
  std::vector<float> freq_factors_;
  // What the graph was built for (matches()).
  ropecheck_plugin_spec spec_{};
  std::vector<double> factors_;  // a LongRoPE spec's arrays, which the spec only points to
  std::uint32_t dtype_ = 0;
  void* q_ = nullptr;
  void* k_ = nullptr;
  std::int64_t q_heads_ = 0, k_heads_ = 0, tokens_ = 0;
  bool multi_ = false;  // ggml_rope_multi: positions axis-major, kGgmlAxes a token
  Pass pass_ = Pass::forward;
};

}  // namespace ropecheck_ggml_peer
