// torch_meta_llama_complex: RoPE exactly as Meta's reference LLaMA code computes it with PyTorch,
// op for op, through the torch C++ API (ATen), exported through the ropecheck plugin ABI 4
// (plugins/include/ropecheck/plugin.h). Not a ropecheck kernel wrapped in torch. The backward pass
// (apply_backward) is autograd's gradient of those ops (peer_common.h), through view_as_complex,
// the complex product and view_as_real, as a training step gets it.
//
// Source mirrored: meta-llama/llama, llama/model.py (precompute_freqs_cis, reshape_for_broadcast,
// apply_rotary_emb, Transformer.forward). Layout: interleaved only (view_as_complex of pairs).
// Angles: fp32 (float32 freqs times the positions promoted to float32, then torch.polar), so the
// plugin declares ROPECHECK_ANGLES_FP32 and nothing else. Partial rotary: NOT supported, because
// Meta's code has none (freqs_cis has head_dim / 2 columns and must match x's pair count:
// reshape_for_broadcast asserts it), so the plugin declares partial_rotary = 0.
//
// Positions: Meta's Transformer slices a precomputed table, freqs_cis[start_pos : start_pos +
// seqlen], whose row m is polar(1, outer(arange(end), freqs))[m]. This plugin evaluates those rows
// for the caller's positions directly, torch.outer(positions, freqs): elementwise the same ops on
// the same values, so bit for bit the table's row for every 0 <= m < end, and the natural
// extension (the same formula) for positions the table would not hold (negative ones, gaps).
//
// Threads: peer_common.h (ROPECHECK_PLUGIN_THREADS, default 1), whatever the call allows. Buffers:
// the caller's q and k are wrapped with from_blob (no copy in); Meta returns new tensors, which
// are copied back into them.
#include "peer_common.h"

namespace {

using namespace ropecheck_torch_peer;

// def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0):
//     freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
//     t = torch.arange(end, device=freqs.device)  # type: ignore
//     freqs = torch.outer(t, freqs).float()  # type: ignore
//     freqs_cis = torch.polar(torch.ones_like(freqs), freqs)  # complex64
//     return freqs_cis
// (t here: the positions, int64 like arange's; `1.0 / x` is Tensor.__rtruediv__ =
// `x.reciprocal() * 1.0`; `theta ** x` is torch.pow(Scalar, Tensor) in float32.)
at::Tensor freqs_cis_at(std::int64_t dim, const at::Tensor& t, double theta) {
  const at::Tensor ar = at::arange(0, dim, 2, at::TensorOptions().dtype(at::kLong))
                            .index({at::indexing::Slice(at::indexing::None, dim / 2)});
  at::Tensor freqs = at::reciprocal(at::pow(theta, ar.to(at::kFloat) / dim)) * 1.0;
  freqs = at::outer(t, freqs).to(at::kFloat);
  return at::polar(at::ones_like(freqs), freqs);
}

// def reshape_for_broadcast(freqs_cis: torch.Tensor, x: torch.Tensor):
//     ndim = x.ndim
//     assert 0 <= 1 < ndim
//     assert freqs_cis.shape == (x.shape[1], x.shape[-1])
//     shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
//     return freqs_cis.view(*shape)
at::Tensor reshape_for_broadcast(const at::Tensor& freqs_cis, const at::Tensor& x) {
  const std::int64_t ndim = x.dim();
  TORCH_CHECK(freqs_cis.size(0) == x.size(1) && freqs_cis.size(1) == x.size(-1), "freqs_cis shape");
  std::vector<std::int64_t> shape;
  for (std::int64_t i = 0; i < ndim; ++i) shape.push_back(i == 1 || i == ndim - 1 ? x.size(i) : 1);
  return freqs_cis.view(shape);
}

// def apply_rotary_emb(xq, xk, freqs_cis):
//     xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
//     xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
//     freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
//     xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
//     xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
//     return xq_out.type_as(xq), xk_out.type_as(xk)
// (one of xq / xk at a time: q and k may have different head counts, and k may be absent.)
at::Tensor apply_rotary_emb(const at::Tensor& x /* [1, T, H, D] */, const at::Tensor& freqs_cis) {
  std::vector<std::int64_t> pairs(x.sizes().begin(), x.sizes().end() - 1);
  pairs.insert(pairs.end(), {-1, 2});
  const at::Tensor x_ = at::view_as_complex(x.to(at::kFloat).reshape(pairs));
  const at::Tensor out = at::view_as_real(x_ * reshape_for_broadcast(freqs_cis, x_)).flatten(3);
  return out.type_as(x);
}

// The forward (the new tensors copied back into the caller's buffers: Meta would keep them), or
// the backward: autograd of the same ops, dy in and dx out.
std::int32_t rope(const ropecheck_plugin_call* call, bool backward) {
  return guarded([&] {
    const ropecheck_plugin_spec* spec = call->spec;
    if (call->dtype != ROPECHECK_DTYPE_FP32 || spec->scaling_kind != ROPECHECK_SCALING_NONE ||
        spec->rotary_dim != spec->head_dim || spec->layout != ROPECHECK_LAYOUT_INTERLEAVED ||
        spec->angle_precision != ROPECHECK_ANGLES_FP32) {
      return ROPECHECK_PLUGIN_UNSUPPORTED;
    }
    const at::AutoGradMode grad_mode(backward);  // the forward: @torch.inference_mode() on Llama.generate
    // Transformer.__init__: self.freqs_cis = precompute_freqs_cis(params.dim // params.n_heads, ...)
    const std::int64_t tokens = call->tokens;
    const at::Tensor t = wrap_positions(call->positions, tokens).reshape({tokens});
    const at::Tensor freqs_cis = freqs_cis_at(spec->head_dim, t, spec->base);
    // Attention.forward: xq = xq.view(bsz, seqlen, self.n_local_heads, self.head_dim)
    //                    xq, xk = apply_rotary_emb(xq, xk, freqs_cis=freqs_cis)
    const at::Tensor q = wrap(static_cast<float*>(call->q), tokens, call->q_heads, spec->head_dim);
    const at::Tensor k = wrap(static_cast<float*>(call->k), tokens, call->k_heads, spec->head_dim);
    const auto forward = [&](const at::Tensor& x) { return apply_rotary_emb(x, freqs_cis); };
    if (backward) {
      backward_through_autograd({q, k}, forward);
      return ROPECHECK_PLUGIN_OK;
    }
    for (const at::Tensor& x : {q, k}) {
      if (x.size(2) != 0) x.copy_(forward(x));  // k_heads == 0: q alone
    }
    return ROPECHECK_PLUGIN_OK;
  });
}

std::int32_t apply(void*, const ropecheck_plugin_call* call) { return rope(call, false); }
std::int32_t apply_backward(void*, const ropecheck_plugin_call* call) { return rope(call, true); }

std::int32_t query_capabilities(void*, ropecheck_plugin_capabilities* caps) {
  caps->layouts = 1u << ROPECHECK_LAYOUT_INTERLEAVED;  // complex pairs (2i, 2i+1)
  caps->dtypes = ROPECHECK_DTYPE_FP32;
  caps->angle_precisions = 1u << ROPECHECK_ANGLES_FP32;  // float32 freqs * float32 positions
  caps->max_head_dim = 0;
  caps->partial_rotary = 0;  // Meta's code rotates the whole head
  return ROPECHECK_PLUGIN_OK;
}

const ropecheck_plugin_v4 kPlugin = {
    ROPECHECK_PLUGIN_ABI_V4,
    sizeof(ropecheck_plugin_v4),
    "torch_meta_llama_complex",
    "PyTorch peer: Meta llama/model.py precompute_freqs_cis + apply_rotary_emb (fp32 angles, "
    "complex64, interleaved), torch ops; the gradient by autograd",
    nullptr,  // no init: torch's pools are set per call
    query_capabilities,
    apply,
    nullptr,
    apply_backward,
    {nullptr, nullptr, nullptr},
};

}  // namespace

extern "C" ROPECHECK_PLUGIN_EXPORT const ropecheck_plugin_v4* ropecheck_plugin_entry(void) { return &kPlugin; }
