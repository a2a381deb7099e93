// torch_hf_mrope: multi-axis RoPE exactly as Hugging Face transformers computes it for Qwen2-VL
// (MRoPE) and Qwen3-VL (interleaved MRoPE) with PyTorch, op for op, through the torch C++ API
// (ATen), exported through the ropecheck plugin ABI 4 (plugins/include/ropecheck/plugin.h). Every
// tensor op below is the op the Python line quoted above it runs; the backward pass
// (apply_backward) is autograd's gradient of them (peer_common.h).
//
// Sources mirrored: transformers/models/qwen2_vl/modeling_qwen2_vl.py (Qwen2VLRotaryEmbedding,
// apply_multimodal_rotary_pos_emb, rotate_half) and models/qwen3_vl/modeling_qwen3_vl.py
// (Qwen3VLTextRotaryEmbedding.apply_interleaved_mrope). One axis (a text-only call) is the same
// code with position_ids expanded to the three axes, as Qwen3-VL's forward does.
// Layout: half-split only (rotate_half). Angles: fp32. Full rotary only, no frequency scaling
// (the checkpoints' rope_type "default"/"mrope"). The vision tower's 2D RoPE is not here: HF
// forms it from a table indexed by row and column whose two halves are equal by construction,
// so it cannot take the sections the ABI allows; the ggml peer's VISION mode covers that form.
//
// Threads: one, as the other torch peers (peer_common.h, ROPECHECK_PLUGIN_THREADS), whatever the
// call allows (plugin.h: "at most"). At the call's count PyTorch's results move by an ulp from one
// thread count to another (docs/findings.md): call_history_independence then fails on every run,
// and shrinking its model-shape case took seven minutes. Buffers: the caller's q and k are wrapped
// with from_blob (no copy in); HF returns new tensors, which are copied back into them.
#include "peer_common.h"

namespace {

using namespace ropecheck_torch_peer;

// inv_freq = 1.0 / (self.base ** (torch.arange(0, self.dim, 2, dtype=torch.int64).float() / self.dim))
at::Tensor inv_freq(double base, std::int64_t dim) {
  const at::Tensor exponent = at::arange(0, dim, 2, at::TensorOptions().dtype(at::kLong)).to(at::kFloat) / dim;
  return at::reciprocal(at::pow(base, exponent)) * 1.0;
}

// Qwen2VLRotaryEmbedding.forward(x, position_ids), position_ids of shape (3, bs, seq):
//     inv_freq_expanded = self.inv_freq[None, None, :, None].float().expand(3, position_ids.shape[1], -1, 1)
//     position_ids_expanded = position_ids[:, :, None, :].float()  # shape (3, bs, 1, positions)
//     freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(2, 3)
// (Qwen3-VL's forward is the same up to here, after `position_ids[None, ...].expand(3, ...)` for
// a 2D position_ids.)
at::Tensor axis_freqs(const at::Tensor& inv, const at::Tensor& position_ids) {
  using at::indexing::None;
  using at::indexing::Slice;
  const at::Tensor inv_freq_expanded =
      inv.index({None, None, Slice(), None}).to(at::kFloat).expand({3, position_ids.size(1), -1, 1});
  const at::Tensor position_ids_expanded = position_ids.index({Slice(), Slice(), None, Slice()}).to(at::kFloat);
  return at::matmul(inv_freq_expanded.to(at::kFloat), position_ids_expanded.to(at::kFloat)).transpose(2, 3);
}

// Qwen3VLTextRotaryEmbedding.apply_interleaved_mrope(freqs, mrope_section):
//     freqs_t = freqs[0]  # just overwrite the first dimension T
//     for dim, offset in enumerate((1, 2), start=1):  # H, W
//         length = mrope_section[dim] * 3
//         idx = slice(offset, length, 3)
//         freqs_t[..., idx] = freqs[dim, ..., idx]
//     return freqs_t
at::Tensor apply_interleaved_mrope(const at::Tensor& freqs, const std::int32_t* mrope_section) {
  using at::indexing::Ellipsis;
  using at::indexing::Slice;
  at::Tensor freqs_t = freqs[0];
  for (const std::int64_t dim : {1, 2}) {
    const std::int64_t offset = dim, length = std::int64_t{mrope_section[dim]} * 3;
    if (length <= offset) continue;  // Python's empty slice: nothing assigned
    const auto idx = Slice(offset, length, 3);
    freqs_t.index_put_({Ellipsis, idx}, freqs.index({dim, Ellipsis, idx}));
  }
  return freqs_t;
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

// def apply_multimodal_rotary_pos_emb(q, k, cos, sin, mrope_section, unsqueeze_dim=1):
//     mrope_section = mrope_section * 2
//     cos = torch.cat([m[i % 3] for i, m in enumerate(cos.split(mrope_section, dim=-1))], dim=-1).unsqueeze(unsqueeze_dim)
//     sin = torch.cat([m[i % 3] for i, m in enumerate(sin.split(mrope_section, dim=-1))], dim=-1).unsqueeze(unsqueeze_dim)
at::Tensor multimodal_pick(const at::Tensor& cos_or_sin /* (3, bs, seq, dim) */, const std::int32_t* section) {
  const std::vector<std::int64_t> doubled = {section[0], section[1], section[2], section[0], section[1], section[2]};
  const std::vector<at::Tensor> chunks = cos_or_sin.split_with_sizes(doubled, -1);
  std::vector<at::Tensor> picked;
  for (std::size_t i = 0; i < chunks.size(); ++i) picked.push_back(chunks[i][static_cast<std::int64_t>(i % 3)]);
  return at::cat(picked, -1).unsqueeze(1);
}

//     q_embed = (q * cos) + (rotate_half(q) * sin)
//     k_embed = (k * cos) + (rotate_half(k) * sin)
// with q as the attention's (bsz, heads, q_len, head_dim) view of the caller's buffer; the new
// tensor returned in the caller's [1, T, H, D] order.
at::Tensor rotated(const at::Tensor& states /* [1, T, H, D] */, const at::Tensor& cos, const at::Tensor& sin) {
  const at::Tensor x = states.transpose(1, 2);
  return ((x * cos) + (rotate_half(x) * sin)).transpose(1, 2);
}

// The forward (copied back into the caller's buffers), or the backward: autograd of the same ops.
std::int32_t rope(const ropecheck_plugin_call* call, bool backward) {
  return guarded([&] {
    const ropecheck_plugin_spec* spec = call->spec;
    if (call->dtype != ROPECHECK_DTYPE_FP32 || spec->scaling_kind != ROPECHECK_SCALING_NONE ||
        spec->layout != ROPECHECK_LAYOUT_HALF_SPLIT || spec->angle_precision != ROPECHECK_ANGLES_FP32 ||
        spec->rotary_dim != spec->head_dim || spec->axis_mode == ROPECHECK_AXES_VISION) {
      return ROPECHECK_PLUGIN_UNSUPPORTED;
    }
    const at::AutoGradMode grad_mode(backward);  // the forward: inference, no graph
    const std::int64_t tokens = call->tokens;
    const std::int64_t axes = call->axes > 0 ? call->axes : 1;
    // ropecheck's positions are token-major [tokens][axes]; HF's position_ids are (3, bs, seq).
    at::Tensor position_ids = at::from_blob(const_cast<std::int64_t*>(call->positions), {1, tokens, axes},
                                            at::TensorOptions().dtype(at::kLong))
                                  .permute({2, 0, 1});
    if (axes == 1) position_ids = position_ids.expand({3, 1, tokens});  // a text-only call
    const at::Tensor freqs = axis_freqs(inv_freq(spec->base, spec->rotary_dim), position_ids);
    at::Tensor cos, sin;
    if (spec->axis_mode == ROPECHECK_AXES_MROPE) {
      //     emb = torch.cat((freqs, freqs), dim=-1); cos = emb.cos() * self.attention_scaling
      const at::Tensor emb = at::cat({freqs, freqs}, -1);
      cos = multimodal_pick(emb.cos() * 1.0, spec->sections);
      sin = multimodal_pick(emb.sin() * 1.0, spec->sections);
    } else {
      // Qwen3-VL (and one axis): the interleaving on freqs, then the usual emb.
      const std::int32_t text_sections[3] = {spec->rotary_dim / 2, 0, 0};
      const at::Tensor picked =
          apply_interleaved_mrope(freqs, spec->axis_mode == ROPECHECK_AXES_IMROPE ? spec->sections : text_sections);
      const at::Tensor emb = at::cat({picked, picked}, -1);
      cos = (emb.cos() * 1.0).unsqueeze(1);
      sin = (emb.sin() * 1.0).unsqueeze(1);
    }
    const at::Tensor q = wrap(static_cast<float*>(call->q), tokens, call->q_heads, spec->head_dim);
    const at::Tensor k = wrap(static_cast<float*>(call->k), tokens, call->k_heads, spec->head_dim);
    const auto forward = [&](const at::Tensor& states) { return rotated(states, cos, sin); };
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
  caps->angle_precisions = 1u << ROPECHECK_ANGLES_FP32;  // float32 inv_freq times float32 positions
  caps->partial_rotary = 0;                              // Qwen2-VL and Qwen3-VL rotate whole heads
  caps->axis_modes = (1u << ROPECHECK_AXES_MROPE) | (1u << ROPECHECK_AXES_IMROPE);
  return ROPECHECK_PLUGIN_OK;
}

const ropecheck_plugin_v4 kPlugin = {
    ROPECHECK_PLUGIN_ABI_V4,
    sizeof(ropecheck_plugin_v4),
    "torch_hf_mrope",
    "PyTorch peer: HF transformers Qwen2-VL MRoPE and Qwen3-VL interleaved MRoPE (fp32 angles, "
    "half-split), torch ops; the gradient by autograd",
    nullptr,  // no init: torch's pools are set per call
    query_capabilities,
    apply,
    nullptr,
    apply_backward,
    {nullptr, nullptr, nullptr},
};

}  // namespace

extern "C" ROPECHECK_PLUGIN_EXPORT const ropecheck_plugin_v4* ropecheck_plugin_entry(void) { return &kPlugin; }
