// torch_hf_rotate_half: RoPE exactly as Hugging Face transformers computes it with PyTorch, op for
// op, through the torch C++ API (ATen), exported through the ropecheck plugin ABI 4
// (plugins/include/ropecheck/plugin.h). Not a ropecheck kernel wrapped in torch: every tensor op below is
// the op the Python line quoted above it runs. The backward pass (apply_backward) is what a
// training step gets from those ops: autograd's gradient of them (peer_common.h).
//
// Source mirrored: transformers/models/llama/modeling_llama.py (v4.38-v4.45: LlamaRotaryEmbedding,
// rotate_half, apply_rotary_pos_emb, LlamaAttention.forward), and for partial rotary
// models/phi/modeling_phi.py (PhiAttention.forward: slice [..., :rotary_dim], rotate, cat).
// Layout: half-split only (rotate_half). Angles: fp32 (inv_freq, positions and their product are
// float32 tensors), so the plugin declares ROPECHECK_ANGLES_FP32 and nothing else.
//
// Threads: peer_common.h (ROPECHECK_PLUGIN_THREADS, default 1), whatever the call allows. Buffers:
// the caller's q and k are wrapped with from_blob (no copy in); HF returns new tensors, which are
// copied back into them.
#include "peer_common.h"

namespace {

using namespace ropecheck_torch_peer;

// class LlamaRotaryEmbedding(nn.Module):
//     def __init__(self, dim, max_position_embeddings=2048, base=10000, device=None, ...):
//         inv_freq = 1.0 / (self.base ** (torch.arange(0, self.dim, 2, dtype=torch.int64).float().to(device) / self.dim))
// (dim is the rotary dim: the head dim, or head_dim * partial_rotary_factor in Phi/NeoX.)
// Python's `1.0 / t` is Tensor.__rtruediv__ = `t.reciprocal() * 1.0` (torch/_tensor.py __rdiv__),
// and `float ** t` is torch.pow(Scalar, Tensor) in float32.
at::Tensor inv_freq(double base, std::int64_t dim) {
  const at::Tensor exponent = at::arange(0, dim, 2, at::TensorOptions().dtype(at::kLong)).to(at::kFloat) / dim;
  return at::reciprocal(at::pow(base, exponent)) * 1.0;
}

//     def forward(self, x, position_ids):
//         inv_freq_expanded = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
//         position_ids_expanded = position_ids[:, None, :].float()
//         with torch.autocast(device_type=device_type, enabled=False):
//             freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
//             emb = torch.cat((freqs, freqs), dim=-1)
//             cos = emb.cos()
//             sin = emb.sin()
//         return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)
// (The inner dimension of the matmul is 1: each angle is one fp32 product float(m) * inv_freq_i,
// the same value as v4.31-v4.37's torch.outer(t, inv_freq) cache.)
void cos_sin(const at::Tensor& inv, const at::Tensor& position_ids, at::Tensor& cos, at::Tensor& sin) {
  const at::Tensor inv_freq_expanded = inv.index({at::indexing::None, at::indexing::Slice(), at::indexing::None})
                                           .to(at::kFloat)
                                           .expand({position_ids.size(0), -1, 1});
  const at::Tensor position_ids_expanded =
      position_ids.index({at::indexing::Slice(), at::indexing::None, at::indexing::Slice()}).to(at::kFloat);
  const at::Tensor freqs = at::matmul(inv_freq_expanded.to(at::kFloat), position_ids_expanded.to(at::kFloat))
                               .transpose(1, 2);
  const at::Tensor emb = at::cat({freqs, freqs}, -1);
  cos = emb.cos().to(at::kFloat);
  sin = emb.sin().to(at::kFloat);
}

// def rotate_half(x):
//     x1 = x[..., : x.shape[-1] // 2]
//     x2 = x[..., x.shape[-1] // 2 :]
//     return torch.cat((-x2, x1), dim=-1)
at::Tensor rotate_half(const at::Tensor& x) {
  const std::int64_t half = x.size(-1) / 2;
  const at::Tensor x1 = x.index({at::indexing::Ellipsis, at::indexing::Slice(at::indexing::None, half)});
  const at::Tensor x2 = x.index({at::indexing::Ellipsis, at::indexing::Slice(half, at::indexing::None)});
  return at::cat({-x2, x1}, -1);
}

// def apply_rotary_pos_emb(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
//     cos = cos.unsqueeze(unsqueeze_dim)
//     sin = sin.unsqueeze(unsqueeze_dim)
//     q_embed = (q * cos) + (rotate_half(q) * sin)
//     k_embed = (k * cos) + (rotate_half(k) * sin)
//     return q_embed, k_embed
at::Tensor apply_rotary_pos_emb(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const at::Tensor c = cos.unsqueeze(1), s = sin.unsqueeze(1);
  return (x * c) + (rotate_half(x) * s);
}

// LlamaAttention.forward:
//     query_states = query_states.view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
//     cos, sin = self.rotary_emb(value_states, position_ids)
//     query_states, key_states = apply_rotary_pos_emb(query_states, key_states, cos, sin)
// PhiAttention.forward (partial rotary):
//     query_rot, query_pass = (query_states[..., : self.rotary_emb.dim], query_states[..., self.rotary_emb.dim :])
//     query_rot, key_rot = apply_rotary_pos_emb(query_rot, key_rot, cos, sin, position_ids)
//     query_states = torch.cat((query_rot, query_pass), dim=-1)
// Returns the new tensor in the caller's [1, T, H, D] order, for the forward to copy back and
// the backward to differentiate.
at::Tensor rotated(const at::Tensor& states /* [1, T, H, D] */, std::int64_t rotary_dim, const at::Tensor& cos,
                   const at::Tensor& sin) {
  const at::Tensor x = states.transpose(1, 2);  // [bsz, heads, q_len, head_dim], a view
  at::Tensor out;
  if (rotary_dim == x.size(-1)) {
    out = apply_rotary_pos_emb(x, cos, sin);
  } else {
    const at::Tensor rot = x.index({at::indexing::Ellipsis, at::indexing::Slice(at::indexing::None, rotary_dim)});
    const at::Tensor pass = x.index({at::indexing::Ellipsis, at::indexing::Slice(rotary_dim, at::indexing::None)});
    out = at::cat({apply_rotary_pos_emb(rot, cos, sin), pass}, -1);
  }
  return out.transpose(1, 2);
}

// The forward (the new tensors copied back into the caller's buffers: HF would keep them), or
// the backward: autograd of the same ops, dy in and dx out.
std::int32_t rope(const ropecheck_plugin_call* call, bool backward) {
  return guarded([&] {
    const ropecheck_plugin_spec* spec = call->spec;
    if (call->dtype != ROPECHECK_DTYPE_FP32 || spec->scaling_kind != ROPECHECK_SCALING_NONE ||
        spec->layout != ROPECHECK_LAYOUT_HALF_SPLIT || spec->angle_precision != ROPECHECK_ANGLES_FP32) {
      return ROPECHECK_PLUGIN_UNSUPPORTED;
    }
    const at::AutoGradMode grad_mode(backward);  // the forward: @torch.no_grad() on forward, inference
    at::Tensor cos, sin;
    cos_sin(inv_freq(spec->base, spec->rotary_dim), wrap_positions(call->positions, call->tokens), cos, sin);
    const at::Tensor q = wrap(static_cast<float*>(call->q), call->tokens, call->q_heads, spec->head_dim);
    const at::Tensor k = wrap(static_cast<float*>(call->k), call->tokens, call->k_heads, spec->head_dim);
    const auto forward = [&](const at::Tensor& states) { return rotated(states, spec->rotary_dim, cos, sin); };
    if (backward) {
      backward_through_autograd({q, k}, forward);
      return ROPECHECK_PLUGIN_OK;
    }
    for (const at::Tensor& states : {q, k}) {
      if (states.size(2) != 0) states.copy_(forward(states));  // k_heads == 0: q alone
    }
    return ROPECHECK_PLUGIN_OK;
  });
}

std::int32_t apply(void*, const ropecheck_plugin_call* call) { return rope(call, false); }
std::int32_t apply_backward(void*, const ropecheck_plugin_call* call) { return rope(call, true); }

std::int32_t query_capabilities(void*, ropecheck_plugin_capabilities* caps) {
  caps->layouts = 1u << ROPECHECK_LAYOUT_HALF_SPLIT;  // rotate_half
  caps->dtypes = ROPECHECK_DTYPE_FP32;
  caps->angle_precisions = 1u << ROPECHECK_ANGLES_FP32;  // float32 inv_freq * float32 positions
  caps->max_head_dim = 0;
  caps->partial_rotary = 1;  // Phi / GPT-NeoX / Persimmon: slice, rotate, cat
  return ROPECHECK_PLUGIN_OK;
}

const ropecheck_plugin_v4 kPlugin = {
    ROPECHECK_PLUGIN_ABI_V4,
    sizeof(ropecheck_plugin_v4),
    "torch_hf_rotate_half",
    "PyTorch peer: HF transformers LlamaRotaryEmbedding + rotate_half (fp32 angles, half-split, "
    "partial rotary as Phi), torch ops; the gradient by autograd",
    nullptr,  // no init: torch's pools are set per call
    query_capabilities,
    apply,
    nullptr,
    apply_backward,
    {nullptr, nullptr, nullptr},
};

}  // namespace

extern "C" ROPECHECK_PLUGIN_EXPORT const ropecheck_plugin_v4* ropecheck_plugin_entry(void) { return &kPlugin; }
