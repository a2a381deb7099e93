// What the two fused-cache torch peers share (torch_vllm_cache.cc, torch_flashinfer_cache.cc): the
// rotation both engines' torch references use (vLLM's RotaryEmbedding.forward_native, which
// FlashInfer's tests carry as their reference too), the caller's cache as a tensor of its storage,
// and one `cache[index] = rows` in that storage. Where the engines differ (the scale's direction,
// the padding rule, the layouts) each peer's own file says so. Not part of the plugin ABI.
#pragma once

#include "peer_common.h"

namespace ropecheck_torch_peer {

// vllm/model_executor/layers/rotary_embedding.py, RotaryEmbedding:
//   def _compute_inv_freq(self, base):
//       inv_freq = 1.0 / (base ** (torch.arange(0, self.rotary_dim, 2, dtype=torch.float) / self.rotary_dim))
//   def _compute_cos_sin_cache(self):
//       t = torch.arange(self.max_position_embeddings, dtype=torch.float)
//       freqs = torch.einsum("i,j -> ij", t, inv_freq)
//       cos = freqs.cos(); sin = freqs.sin()
//       cache = torch.cat((cos, sin), dim=-1)
//   forward_native:
//       cos_sin = self.cos_sin_cache.index_select(0, positions)
//       cos, sin = cos_sin.chunk(2, dim=-1)
// The table here has a row per DISTINCT position of the call rather than max_position rows (the
// positions may be negative or reach 2^24): each row is the same ops on the same float(m), so the
// same bits as the full table's row m; index_select then picks each token's row as vLLM's does.
inline void cos_sin_for(const at::Tensor& positions /* [T] int64 */, double base, std::int64_t rotary_dim,
                        at::Tensor& cos, at::Tensor& sin) {
  const at::Tensor inv_freq =
      at::reciprocal(at::pow(base, at::arange(0, rotary_dim, 2, at::TensorOptions().dtype(at::kFloat)) /
                                       static_cast<double>(rotary_dim))) *
      1.0;  // Python's `1.0 / t` is t.reciprocal() * 1.0 (torch/_tensor.py __rdiv__)
  const auto [distinct, row_of, counts] = at::_unique2(positions, /*sorted=*/true, /*return_inverse=*/true, false);
  const at::Tensor freqs = at::einsum("i,j->ij", {distinct.to(at::kFloat), inv_freq});
  const at::Tensor cos_sin_cache = at::cat({freqs.cos(), freqs.sin()}, -1);
  const std::vector<at::Tensor> halves = cos_sin_cache.index_select(0, row_of.reshape({-1})).chunk(2, -1);
  cos = halves[0];
  sin = halves[1];
}

// vllm/model_executor/layers/rotary_embedding/common.py:
//   def apply_rotary_emb_torch(x, cos, sin, is_neox_style):
//       cos = cos.unsqueeze(-2).to(x.dtype); sin = sin.unsqueeze(-2).to(x.dtype)
//       if is_neox_style: x1, x2 = torch.chunk(x, 2, dim=-1)
//       else: x1 = x[..., ::2]; x2 = x[..., 1::2]
//       o1 = x1 * cos - x2 * sin
//       o2 = x2 * cos + x1 * sin
//       if is_neox_style: return torch.cat((o1, o2), dim=-1)
//       else: return torch.stack((o1, o2), dim=-1).flatten(-2)
inline at::Tensor apply_rotary_emb_torch(const at::Tensor& x /* [T, H, rot] */, const at::Tensor& cos_in,
                                         const at::Tensor& sin_in, bool is_neox_style) {
  using at::indexing::Ellipsis;
  using at::indexing::None;
  using at::indexing::Slice;
  const at::Tensor cos = cos_in.unsqueeze(-2).to(x.dtype()), sin = sin_in.unsqueeze(-2).to(x.dtype());
  at::Tensor x1, x2;
  if (is_neox_style) {
    const std::vector<at::Tensor> halves = at::chunk(x, 2, -1);
    x1 = halves[0];
    x2 = halves[1];
  } else {
    x1 = x.index({Ellipsis, Slice(None, None, 2)});
    x2 = x.index({Ellipsis, Slice(1, None, 2)});
  }
  const at::Tensor o1 = x1 * cos - x2 * sin;
  const at::Tensor o2 = x2 * cos + x1 * sin;
  if (is_neox_style) return at::cat({o1, o2}, -1);
  return at::stack({o1, o2}, -1).flatten(-2);
}

//   forward_native (per q and k):
//       query_rot = query[..., :self.rotary_dim]; query_pass = query[..., self.rotary_dim:]
//       query_rot = apply_rotary_emb_torch(query_rot, cos, sin, self.is_neox_style)
//       query = torch.cat((query_rot, query_pass), dim=-1).reshape(query_shape)
// is_neox_style is ropecheck's half-split layout; GPT-J style (False) its interleaved.
inline at::Tensor forward_native(const at::Tensor& x /* [T, H, D] */, const at::Tensor& cos, const at::Tensor& sin,
                                 const ropecheck_plugin_spec& spec) {
  using at::indexing::Ellipsis;
  using at::indexing::None;
  using at::indexing::Slice;
  const at::Tensor rot = x.index({Ellipsis, Slice(None, spec.rotary_dim)});
  const at::Tensor pass = x.index({Ellipsis, Slice(spec.rotary_dim, None)});
  return at::cat({apply_rotary_emb_torch(rot, cos, sin, spec.layout == ROPECHECK_LAYOUT_HALF_SPLIT), pass}, -1);
}

// What both engines' torch references can rotate: one axis, no frequency scaling (RotaryEmbedding
// itself; the scaled subclasses are other classes), fp32 angles, both pair layouts, partial rotary.
inline bool rotation_supported(const ropecheck_plugin_spec& spec) {
  return spec.scaling_kind == ROPECHECK_SCALING_NONE && spec.axis_mode == ROPECHECK_AXES_NONE &&
         spec.angle_precision == ROPECHECK_ANGLES_FP32 && spec.attention_factor == 1.0 &&
         (spec.layout == ROPECHECK_LAYOUT_HALF_SPLIT || spec.layout == ROPECHECK_LAYOUT_INTERLEAVED);
}

inline void rope_capabilities(ropecheck_plugin_capabilities* caps) {
  caps->layouts = (1u << ROPECHECK_LAYOUT_INTERLEAVED) | (1u << ROPECHECK_LAYOUT_HALF_SPLIT);
  caps->dtypes = ROPECHECK_DTYPE_FP32;
  caps->angle_precisions = 1u << ROPECHECK_ANGLES_FP32;  // float32 inv_freq and float(m)
  caps->partial_rotary = 1;                              // rotary_dim < head_size: query_pass
}

// The RoPE-only entry (ABI 2's apply, required): forward_native on q and k, written back.
inline std::int32_t apply_forward_native(const ropecheck_plugin_call* call) {
  return guarded([&] {
    const ropecheck_plugin_spec& spec = *call->spec;
    if (call->dtype != ROPECHECK_DTYPE_FP32 || !rotation_supported(spec)) return ROPECHECK_PLUGIN_UNSUPPORTED;
    const at::Tensor positions = wrap_positions(call->positions, call->tokens).reshape({-1});
    at::Tensor cos, sin;
    cos_sin_for(positions, spec.base, spec.rotary_dim, cos, sin);
    for (auto [data, heads] : {std::pair{static_cast<float*>(call->q), call->q_heads},
                               std::pair{static_cast<float*>(call->k), call->k_heads}}) {
      if (heads == 0) continue;  // q alone
      const at::Tensor x = wrap(data, call->tokens, heads, spec.head_dim)[0];
      x.copy_(forward_native(x, cos, sin, spec));
    }
    return ROPECHECK_PLUGIN_OK;
  });
}

// ---- the cache ----------------------------------------------------------------------------------

inline bool is_fp8(std::int32_t storage) {
  return storage == ROPECHECK_CACHE_FP8_E4M3 || storage == ROPECHECK_CACHE_FP8_E5M2;
}

// The caller's cache as the engines allocate it: NHD [blocks, block_size, kv_heads, head_dim],
// HND [blocks, kv_heads, block_size, head_dim], MLA [blocks, block_size, latent + head_dim], in the
// storage's torch dtype. FP8: uint8 bit patterns, as vLLM's own FP8 caches are (kv_cache_dtype
// "fp8": a torch.uint8 tensor), since torch 1.13 has no float8 dtype.
inline at::Tensor wrap_cache(void* data, const ropecheck_plugin_cache& c) {
  at::ScalarType dtype = at::kByte;
  switch (c.storage) {
    case ROPECHECK_CACHE_FP32: dtype = at::kFloat; break;
    case ROPECHECK_CACHE_BF16: dtype = at::kBFloat16; break;
    case ROPECHECK_CACHE_FP16: dtype = at::kHalf; break;
    default: break;
  }
  std::vector<std::int64_t> shape;
  if (c.layout == ROPECHECK_CACHE_MLA) shape = {c.blocks, c.block_size, c.latent_dim + c.head_dim};
  else if (c.layout == ROPECHECK_CACHE_HND) shape = {c.blocks, c.kv_heads, c.block_size, c.head_dim};
  else shape = {c.blocks, c.block_size, c.kv_heads, c.head_dim};
  return at::from_blob(data, shape, at::TensorOptions().dtype(dtype));
}

// The cast to float8_e4m3fn / float8_e5m2 that torch 1.13 lacks, in torch ops: x (fp32, already
// clamped to the format's largest value, so nothing here overflows) to the nearest-even value of
// the format's grid, as its bit pattern. frexp and ldexp are exact, and round() is half-to-even on
// x / step, a power-of-two scaling of x (exact): the one rounding is the format's own. A NaN
// becomes the format's NaN (e4m3fn's S.1111.111, e5m2's quiet 0x7E), with x's sign.
inline at::Tensor fp8_bits(const at::Tensor& x, std::int32_t storage) {
  const bool e4m3 = storage == ROPECHECK_CACHE_FP8_E4M3;
  const int mantissa_bits = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
  const at::Tensor sign = at::signbit(x).to(at::kInt) * 128;
  const at::Tensor a = at::nan_to_num(x.abs(), 0.0);  // a NaN's bits are set below; no NaN cast to int
  // The spacing of a's binade (a = m 2^e, m in [0.5, 1)), or of the subnormals below 2^(1 - bias).
  const at::Tensor e = at::clamp_min(std::get<1>(at::frexp(a)) - 1, 1 - bias);
  const at::Tensor step = at::ldexp(at::ones_like(a), e - mantissa_bits);
  const at::Tensor r = at::round(a / step) * step;
  const at::Tensor e_r = std::get<1>(at::frexp(r)) - 1;
  const at::Tensor normal = r >= std::ldexp(1.0, 1 - bias);
  const at::Tensor field = at::where(normal, e_r + bias, at::zeros_like(e_r));
  const at::Tensor fraction =
      at::where(normal, at::ldexp(r, -e_r) - 1, at::ldexp(r, at::full_like(e_r, bias - 1)));
  const at::Tensor mantissa = at::ldexp(fraction, at::full_like(e_r, mantissa_bits)).to(at::kInt);
  at::Tensor bits = sign + field * (1 << mantissa_bits) + mantissa;
  bits = at::where(at::isnan(x), sign + (e4m3 ? 0x7F : 0x7E), bits);
  return bits.to(at::kByte);
}

// cache[index] = rows (fp32), in the cache's storage: fp32 as is; bf16 and fp16 by torch's own
// .to() (round to nearest even); FP8 scaled in fp32 in the engine's direction (`multiply`), then
// clamped to the format's largest value (vLLM's scaled_fp8_conversion and FlashInfer's
// quantization both saturate; an eager .to(float8) would not: pytorch/ao #1912), then fp8_bits.
// `scales` holds 1 scale (per tensor) or one per kv head; heads_dim is where rows' kv head is (-2
// for [n, H, D] rows; MLA's [n, F] rows take the one scale).
inline void store_rows(at::Tensor cache, const std::vector<at::indexing::TensorIndex>& index, const at::Tensor& rows,
                       const ropecheck_plugin_cache& c, const float* scales, std::int64_t scale_count,
                       bool multiply) {
  if (!is_fp8(c.storage)) {
    cache.index_put_(index, rows.to(cache.scalar_type()));
    return;
  }
  at::Tensor scale = at::from_blob(const_cast<float*>(scales), {scale_count}, at::TensorOptions().dtype(at::kFloat));
  if (rows.dim() == 3) scale = scale.reshape({-1, 1});  // [H, 1] broadcasts over [n, H, D]
  const double fp8_max = c.storage == ROPECHECK_CACHE_FP8_E4M3 ? 448.0 : 57344.0;
  const at::Tensor stored = (multiply ? rows * scale : rows / scale).clamp(-fp8_max, fp8_max);
  cache.index_put_(index, fp8_bits(stored, c.storage));
}

}  // namespace ropecheck_torch_peer
