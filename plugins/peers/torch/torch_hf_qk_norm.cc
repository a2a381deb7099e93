// torch_hf_qk_norm: Qwen3's attention input as HF transformers computes it, op for op, through the
// torch C++ API (ATen): q_norm and k_norm (Qwen3RMSNorm) over each head, then
// apply_rotary_pos_emb; exported through the plugin ABI 6's form entry
// (plugins/include/ropecheck/plugin.h; the same in Python: plugins/examples/python/
// torch_rope_form.py's hf_qwen3_qk_norm).
//
// Source mirrored: transformers/models/qwen3/modeling_qwen3.py (Qwen3RMSNorm, Qwen3RotaryEmbedding,
// rotate_half, apply_rotary_pos_emb; Qwen3Attention.forward: q_norm(q_proj(x).view(hidden_shape))).
// The norm in the model's dtype, as HF leaves it (NormPrecision storage): the variance in float32,
// rsqrt(variance + eps), `weight * hidden_states.to(input_dtype)` (the weight as the call gives it,
// the product rounded to the model's dtype as a bf16 weight's product is). The rotation: HF's own
// angles (float32 inv_freq times float(position)), rotate_half pairs, a partial rotary model's
// [..., :rotary_dim] sliced, widened to float32 and rounded once into the buffer.
//
// Threads: peer_common.h (ROPECHECK_PLUGIN_THREADS, default 1).
#include "rope_form_common.h"

namespace {

using namespace ropecheck_torch_peer;
using at::indexing::Ellipsis;
using at::indexing::None;
using at::indexing::Slice;

// Qwen3RotaryEmbedding: inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim));
// forward: freqs = (inv_freq[None, :, None] @ position_ids[:, None, :].float()).transpose(1, 2) (an
// inner dimension of 1: one fp32 product each); emb = torch.cat((freqs, freqs), dim=-1).
void hf_cos_sin(const at::Tensor& positions /* [T] */, double base, std::int64_t dim, at::Tensor& cos, at::Tensor& sin) {
  const at::Tensor exponent = at::arange(0, dim, 2, at::TensorOptions().dtype(at::kLong)).to(at::kFloat) / dim;
  const at::Tensor inv_freq = at::reciprocal(at::pow(base, exponent)) * 1.0;
  const at::Tensor freqs = positions.to(at::kFloat).unsqueeze(1) * inv_freq.unsqueeze(0);
  const at::Tensor emb = at::cat({freqs, freqs}, -1);
  cos = emb.cos();
  sin = emb.sin();
}

// def rotate_half(x): x1 = x[..., : x.shape[-1] // 2]; x2 = x[..., x.shape[-1] // 2 :]; return torch.cat((-x2, x1), dim=-1)
at::Tensor rotate_half(const at::Tensor& x) {
  const std::int64_t half = x.size(-1) / 2;
  return at::cat({-x.index({Ellipsis, Slice(half, None)}), x.index({Ellipsis, Slice(None, half)})}, -1);
}

// apply_rotary_pos_emb (unsqueeze_dim over the heads of [T, H, D]): (q * cos) + (rotate_half(q) * sin);
// partial rotary (Phi, NeoX): the first rotary_dim features, the rest concatenated after them.
at::Tensor apply_rotary_pos_emb(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin, std::int64_t rotary_dim) {
  const at::Tensor c = cos.unsqueeze(1), s = sin.unsqueeze(1);
  const at::Tensor rot = x.index({Ellipsis, Slice(None, rotary_dim)});
  const at::Tensor pass = x.index({Ellipsis, Slice(rotary_dim, None)});
  return at::cat({(rot * c) + (rotate_half(rot) * s), pass}, -1);
}

// Qwen3RMSNorm.forward:
//   input_dtype = hidden_states.dtype; hidden_states = hidden_states.to(torch.float32)
//   variance = hidden_states.pow(2).mean(-1, keepdim=True)
//   hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
//   return self.weight * hidden_states.to(input_dtype)
at::Tensor qwen3_rms_norm(const at::Tensor& x, const at::Tensor& weight, double eps) {
  const at::ScalarType input_dtype = x.scalar_type();
  at::Tensor hidden = x.to(at::kFloat);
  const at::Tensor variance = hidden.pow(2).mean(-1, /*keepdim=*/true);
  hidden = hidden * at::rsqrt(variance + eps);
  return (weight * hidden.to(input_dtype)).to(input_dtype);
}

bool rotation_supported(const ropecheck_plugin_spec& spec) {
  return spec.scaling_kind == ROPECHECK_SCALING_NONE && spec.axis_mode == ROPECHECK_AXES_NONE &&
         spec.angle_precision == ROPECHECK_ANGLES_FP32 && spec.layout == ROPECHECK_LAYOUT_HALF_SPLIT;
}

// The RoPE entry (required by the ABI): apply_rotary_pos_emb alone on fp32 [T, H, D] q and k.
std::int32_t apply(void*, const ropecheck_plugin_call* call) {
  return guarded([&] {
    const ropecheck_plugin_spec& spec = *call->spec;
    if (call->dtype != ROPECHECK_DTYPE_FP32 || !rotation_supported(spec)) return ROPECHECK_PLUGIN_UNSUPPORTED;
    at::Tensor cos, sin;
    hf_cos_sin(wrap_positions(call->positions, call->tokens).reshape({-1}), spec.base, spec.rotary_dim, cos, sin);
    for (auto [data, heads] : {std::pair{static_cast<float*>(call->q), call->q_heads},
                               std::pair{static_cast<float*>(call->k), call->k_heads}}) {
      if (heads == 0) continue;  // q alone
      const at::Tensor x = wrap(data, call->tokens, heads, spec.head_dim)[0];
      x.copy_(apply_rotary_pos_emb(x, cos, sin, spec.rotary_dim));
    }
    return ROPECHECK_PLUGIN_OK;
  });
}

std::int32_t apply_rope_form(void*, const ropecheck_plugin_form_call* call) {
  return guarded([&] {
    const ropecheck_plugin_spec& spec = *call->spec;
    if (!rotation_supported(spec) || call->angle_source != ROPECHECK_ANGLE_SOURCE_SPEC) {
      return ROPECHECK_PLUGIN_UNSUPPORTED;
    }
    if (call->norm != nullptr && (call->norm->weight != ROPECHECK_NORM_WEIGHT_PLAIN ||
                                  call->norm->precision != ROPECHECK_NORM_STORAGE)) {
      return ROPECHECK_PLUGIN_UNSUPPORTED;
    }
    at::Tensor cos, sin;
    hf_cos_sin(wrap_positions(call->positions, call->tokens).reshape({-1}), spec.base, spec.rotary_dim, cos, sin);
    for_each_view(call, [&](const at::Tensor& x, const at::Tensor& weight) {
      const at::Tensor states = call->norm != nullptr ? qwen3_rms_norm(x, weight, call->norm->eps) : x;
      x.copy_(apply_rotary_pos_emb(states.to(at::kFloat), cos, sin, spec.rotary_dim));  // in place
    });
    return ROPECHECK_PLUGIN_OK;
  });
}

std::int32_t query_capabilities(void*, ropecheck_plugin_capabilities* caps) {
  caps->layouts = 1u << ROPECHECK_LAYOUT_HALF_SPLIT;  // rotate_half
  caps->dtypes = ROPECHECK_DTYPE_FP32;
  caps->angle_precisions = 1u << ROPECHECK_ANGLES_FP32;  // float32 inv_freq * float(m)
  caps->partial_rotary = 1;
  return ROPECHECK_PLUGIN_OK;
}

std::int32_t query_form_capabilities(void*, ropecheck_plugin_form_capabilities* caps) {
  caps->dtypes = ROPECHECK_DTYPE_FP32 | ROPECHECK_DTYPE_BF16;
  caps->angle_sources = 1u << ROPECHECK_ANGLE_SOURCE_SPEC;  // Qwen3RotaryEmbedding's own
  caps->strided = 1;
  caps->k_optional = 1;
  caps->plain_calls = 1;
  caps->norm_weights = 1u << ROPECHECK_NORM_WEIGHT_PLAIN;  // Qwen3: weight * x
  caps->norm_precision = ROPECHECK_NORM_STORAGE;          // in the model's dtype
  return ROPECHECK_PLUGIN_OK;
}

const ropecheck_plugin_forms kForms = {sizeof(ropecheck_plugin_forms), 0, query_form_capabilities, apply_rope_form,
                                       {nullptr, nullptr, nullptr, nullptr}};

const ropecheck_plugin_v6 kPlugin = {
    ROPECHECK_PLUGIN_ABI_V6,
    sizeof(ropecheck_plugin_v6),
    "torch_hf_qk_norm",
    "PyTorch peer: HF transformers' Qwen3 attention input, Qwen3RMSNorm on q and k (in the model's dtype) then "
    "apply_rotary_pos_emb, through strided views (fp32, bf16)",
    nullptr,
    query_capabilities,
    apply,
    nullptr,
    nullptr,  // no backward: the form is an inference call
    nullptr,
    nullptr,
    &kForms,
};

}  // namespace

extern "C" ROPECHECK_PLUGIN_EXPORT const ropecheck_plugin_v6* ropecheck_plugin_entry(void) { return &kPlugin; }
