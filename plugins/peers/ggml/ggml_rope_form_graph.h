// One form call (plugin.h's apply_rope_form, ABI 6) as llama.cpp's graph builds QK-norm then RoPE
// on q and k taken out of a fused projection: the chain its GPU back ends fuse into one kernel,
// here computed op by op by the CPU backend. One graph:
//   buffer  a 1-D tensor of the call's `elements` over the caller's bytes (no copy)
//   q, k    ggml_view_3d of it, [head_dim, heads, tokens], nb1 = head stride and nb2 = token
//           stride in bytes, the offset in bytes: llama.cpp's views of a packed qkv
//           (Qcur = ggml_view_3d(cur, n_embd_head, n_head, n_tokens, ...))
//   norm    ggml_rms_norm(x, eps) over each head row (ne0 = head_dim), then ggml_mul by the
//           weight [head_dim], broadcast over heads and tokens: llama.cpp's build_norm(...,
//           LLM_NORM_RMS) of attn_q_norm / attn_k_norm (Qwen3, Gemma 3, GLM-4). Gemma's 1 + w:
//           ggml models carry the weight with the 1 already added (the converter adds it at
//           conversion, the GGUF stores w + 1 in F32), so the weight tensor is w' = 1 + w
//           rounded to fp32 and the graph is the plain one.
//   rope    ggml_rope_ext (NEOX for half-split, NORMAL for interleaved, n_dims = rotary_dim, the
//           spec's base and scaling as ggml_rope_parameters.h maps them): ggml forms its angles
//           from the int32 positions itself; it takes no cos/sin cache (only freq_factors)
//   back    ggml_cpy of the result into the same view: only the views' rows are written
// ggml's CPU rms_norm takes F32 only, and llama.cpp's activations are F32: a bf16 or fp16 buffer's
// rows go in through ggml_cast to F32 and come back through ggml_cpy, ggml's own conversions
// (round to nearest even), so the normalized value stays F32 into the rotation (fp32 precision)
// and the result is rounded once. Calls without a norm are the same graph without the two ops.
// Intermediates are placed by ggml's graph allocator; positions, the weights and the frequency
// factors live in a backend buffer of their own, written per call.
//   RopeFormGraph::build(...) every call (the "ggml" plugin);
//   RopeFormGraph::matches(...) then compute() alone while the call is the same but for the
//   positions' and weights' values (the "ggml_compute" plugin).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml.h"
#include "ggml_rope_parameters.h"
#include "ropecheck/plugin.h"

namespace ropecheck_ggml_peer {

class RopeFormGraph {
 public:
  RopeFormGraph() = default;
  ~RopeFormGraph();
  RopeFormGraph(const RopeFormGraph&) = delete;
  RopeFormGraph& operator=(const RopeFormGraph&) = delete;

  // Builds the graph of `call` over `buffer` (the call's buffer or an aligned copy of it: 32-byte
  // aligned; a dtype ggml has; angles from the spec; one axis). "" or why not.
  std::string build(const ropecheck_plugin_form_call& call, void* buffer, const RopeParameters& parameters);
  // True when `call` over `buffer` is what the graph was built for, but for positions' and
  // weights' values.
  bool matches(const ropecheck_plugin_form_call& call, const void* buffer) const;
  // Writes the call's positions and weights into the graph's inputs and computes it.
  bool compute(ggml_backend_t backend, const ropecheck_plugin_form_call& call);

 private:
  void release();

  ggml_context* context_ = nullptr;  // the graph's tensors (metadata only)
  ggml_context* inputs_context_ = nullptr;
  ggml_backend_buffer_t inputs_buffer_ = nullptr;  // positions, weights, freq_factors
  ggml_backend_buffer_t wrapped_ = nullptr;        // the caller's buffer
  ggml_gallocr_t allocator_ = nullptr;
  ggml_cgraph* graph_ = nullptr;
  ggml_tensor* positions_ = nullptr;
  ggml_tensor* q_weight_ = nullptr;
  ggml_tensor* k_weight_ = nullptr;
  // What the graph was built for (matches()).
  ropecheck_plugin_spec spec_{};
  std::vector<double> factors_;
  const void* buffer_ = nullptr;
  std::uint32_t dtype_ = 0;
  std::int64_t elements_ = 0, tokens_ = 0;
  ropecheck_plugin_head_view q_{}, k_{};
  bool has_norm_ = false;
  std::int32_t weight_ = 0;
  double eps_ = 0;
};

// Whether ggml_view_3d takes `view` of a buffer of `elements` (ggml asserts that the view's
// contiguous size from its offset fits in the buffer; a view of heads and tokens that do not
// overlap always does).
bool ggml_takes_view(const ropecheck_plugin_head_view& view, std::int64_t tokens, std::int64_t head_dim,
                     std::int64_t elements);

}  // namespace ropecheck_ggml_peer
