// What the call-form torch peers share (torch_vllm_rope.cc, torch_hf_qk_norm.cc): the caller's
// one buffer as a tensor of its storage, q's and k's strided views into it (at::as_strided over
// the same memory, so that a copy_ into a view lands in place and nothing around the rows moves),
// and the cos/sin cache, the positions and the norm's weights as tensors. Not part of the plugin
// ABI (plugins/include/ropecheck/plugin.h, ABI 6's form call).
#pragma once

#include "peer_common.h"

namespace ropecheck_torch_peer {

// The storage's torch dtype: float32, bfloat16, float16 (the ABI's bit patterns are torch's).
inline at::ScalarType form_dtype(std::uint32_t dtype) {
  return dtype == ROPECHECK_DTYPE_BF16 ? at::kBFloat16 : dtype == ROPECHECK_DTYPE_FP16 ? at::kHalf : at::kFloat;
}

// The whole buffer, flat, over the caller's memory (no copy).
inline at::Tensor wrap_form_buffer(const ropecheck_plugin_form_call* call) {
  return at::from_blob(call->buffer, {call->elements}, at::TensorOptions().dtype(form_dtype(call->dtype)));
}

// A head view of the buffer as [tokens, heads, head_dim]: what the engines' kernels get as
// query.view(num_tokens, -1, head_size) of a slice (vLLM) or after .view(hidden_shape) (HF).
inline at::Tensor form_view(const at::Tensor& buffer, const ropecheck_plugin_head_view& view, std::int64_t tokens,
                            std::int64_t head_dim) {
  return buffer.as_strided({tokens, view.heads, head_dim}, {view.token_stride, view.head_stride, 1}, view.offset);
}

// The call's cos/sin cache, [cache_rows, rotary_dim] fp32 (read-only: never written).
inline at::Tensor wrap_cos_sin_cache(const ropecheck_plugin_form_call* call, std::int64_t rotary_dim) {
  return at::from_blob(const_cast<float*>(call->cos_sin_cache), {call->cache_rows, rotary_dim},
                       at::TensorOptions().dtype(at::kFloat));
}

// A norm weight, [head_dim] fp32 (read-only).
inline at::Tensor wrap_weight(const float* weight, std::int64_t head_dim) {
  return at::from_blob(const_cast<float*>(weight), {head_dim}, at::TensorOptions().dtype(at::kFloat));
}

// Each of q and k (when the call has k) with its norm weight (undefined without a norm).
template <typename Body>
void for_each_view(const ropecheck_plugin_form_call* call, Body&& body) {
  const at::Tensor buffer = wrap_form_buffer(call);
  const std::int64_t d = call->spec->head_dim;
  body(form_view(buffer, *call->q, call->tokens, d),
       call->norm != nullptr ? wrap_weight(call->norm->q_weight, d) : at::Tensor());
  if (call->k != nullptr) {
    body(form_view(buffer, *call->k, call->tokens, d),
         call->norm != nullptr ? wrap_weight(call->norm->k_weight, d) : at::Tensor());
  }
}

}  // namespace ropecheck_torch_peer
