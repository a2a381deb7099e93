// torch_vllm_rope: RoPE in vLLM's own call form as its torch reference computes it, op for op,
// through the torch C++ API (ATen), exported through the plugin ABI 6's form entry
// (plugins/include/ropecheck/plugin.h; the same form in Python:
// plugins/examples/python/torch_rope_form.py's vllm_forward_native).
//
// Source mirrored: vllm/model_executor/layers/rotary_embedding.py, RotaryEmbedding.forward_native
// (fused_cache_common.h quotes it): cos_sin = cos_sin_cache.index_select(0, positions), chunked
// into cos and sin, query[..., :rotary_dim] rotated NeoX- or GPT-J-style, the rest passed. q and k
// are the caller's strided views (flat tensors, slices of a packed qkv, MLA's q_pe parts: at
// offset nope of each [nope | rope] head), rewritten in place through at::as_strided views.
// Angles: the call's cos/sin cache (vLLM's own, [max_position, rotary_dim], any scaling already in
// it), or from the spec as _compute_cos_sin_cache builds that table. bf16 and fp16: the values
// widened to float32 for the rotation and rounded once into the buffer (forward_native in the
// model's dtype rounds cos, sin and every product again). No QK-norm: vLLM runs the norm as
// its own layer before this call.
//
// Threads: peer_common.h (ROPECHECK_PLUGIN_THREADS, default 1).
#include "fused_cache_common.h"
#include "rope_form_common.h"

namespace {

using namespace ropecheck_torch_peer;

std::int32_t apply(void*, const ropecheck_plugin_call* call) { return apply_forward_native(call); }

std::int32_t apply_rope_form(void*, const ropecheck_plugin_form_call* call) {
  return guarded([&] {
    const ropecheck_plugin_spec& spec = *call->spec;
    if (call->norm != nullptr) return ROPECHECK_PLUGIN_UNSUPPORTED;
    const at::Tensor positions = wrap_positions(call->positions, call->tokens).reshape({-1});
    at::Tensor cos, sin;
    if (call->angle_source == ROPECHECK_ANGLE_SOURCE_COS_SIN_CACHE) {
      // forward_native: cos_sin = self.cos_sin_cache.index_select(0, positions); cos, sin = cos_sin.chunk(2, -1)
      const std::vector<at::Tensor> halves =
          wrap_cos_sin_cache(call, spec.rotary_dim).index_select(0, positions).chunk(2, -1);
      cos = halves[0];
      sin = halves[1];
    } else {
      if (!rotation_supported(spec)) return ROPECHECK_PLUGIN_UNSUPPORTED;
      cos_sin_for(positions, spec.base, spec.rotary_dim, cos, sin);
    }
    for_each_view(call, [&](const at::Tensor& x, const at::Tensor&) {
      x.copy_(forward_native(x.to(at::kFloat), cos, sin, spec));  // through the view: in place
    });
    return ROPECHECK_PLUGIN_OK;
  });
}

std::int32_t query_capabilities(void*, ropecheck_plugin_capabilities* caps) {
  rope_capabilities(caps);
  return ROPECHECK_PLUGIN_OK;
}

std::int32_t query_form_capabilities(void*, ropecheck_plugin_form_capabilities* caps) {
  caps->dtypes = ROPECHECK_DTYPE_FP32 | ROPECHECK_DTYPE_BF16 | ROPECHECK_DTYPE_FP16;
  caps->angle_sources = (1u << ROPECHECK_ANGLE_SOURCE_SPEC) | (1u << ROPECHECK_ANGLE_SOURCE_COS_SIN_CACHE);
  caps->strided = 1;
  caps->k_optional = 1;
  caps->plain_calls = 1;
  caps->norm_weights = 0;  // the norm is another layer in vLLM
  return ROPECHECK_PLUGIN_OK;
}

const ropecheck_plugin_forms kForms = {sizeof(ropecheck_plugin_forms), 0, query_form_capabilities, apply_rope_form,
                                       {nullptr, nullptr, nullptr, nullptr}};

const ropecheck_plugin_v6 kPlugin = {
    ROPECHECK_PLUGIN_ABI_V6,
    sizeof(ropecheck_plugin_v6),
    "torch_vllm_rope",
    "PyTorch peer: vLLM's RotaryEmbedding.forward_native in its call form (cos_sin_cache indexed by position, "
    "strided q and k incl. MLA's q_pe, rewritten in place; fp32, bf16, fp16)",
    nullptr,
    query_capabilities,
    apply,
    nullptr,
    nullptr,  // no backward: an inference path
    nullptr,  // no fused cache write: torch_vllm_cache
    nullptr,
    &kForms,
};

}  // namespace

extern "C" ROPECHECK_PLUGIN_EXPORT const ropecheck_plugin_v6* ropecheck_plugin_entry(void) { return &kPlugin; }
