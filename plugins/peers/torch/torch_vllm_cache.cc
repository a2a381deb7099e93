// torch_vllm_cache: RoPE fused with the paged KV-cache write as vLLM's torch reference forms compute
// it, op for op, through the torch C++ API (ATen), exported through the plugin ABI 5
// (plugins/include/ropecheck/plugin.h; the same forms in Python:
// plugins/examples/python/torch_fused_cache.py's vllm_fused).
//
// Sources mirrored: vllm/model_executor/layers/rotary_embedding.py (RotaryEmbedding.forward_native:
// fused_cache_common.h), and the reference of reshape_and_cache_flash and concat_and_cache_mla in
// vLLM's tests/kernels/attention/test_cache.py (block_indices = slot_mapping // block_size,
// block_offsets = slot_mapping % block_size, key_cache[block_idx, block_offset] = key[i]), with the
// CUDA kernels' `if (slot_idx < 0) return;` for a padding token (csrc/cache_kernels.cu).
// What vLLM does, declared: NHD (its flash layout) and MLA ([kv_c | k_pe]); fp32, bf16, fp16 by
// torch's casts; FP8 e4m3 and e5m2 with the scale DIVIDED (vLLM's scaled_fp8_conversion: x / scale,
// clamped to the format's largest value), written as torch 1.13's ops can (fused_cache_common.h,
// fp8_bits: clamp, then an exact nearest-even rounding to the grid by frexp/ldexp/round; torch 1.13
// has no float8 dtype to cast to); padding rotate_q_only (forward_native rotates every token's q,
// the cache write skips slot -1).
//
// Threads: peer_common.h (ROPECHECK_PLUGIN_THREADS, default 1).
#include "fused_cache_common.h"

namespace {

using namespace ropecheck_torch_peer;
using at::indexing::TensorIndex;

std::int32_t apply(void*, const ropecheck_plugin_call* call) { return apply_forward_native(call); }

// forward_native on q (in place) and k (a new tensor: k is read-only), then the write.
std::int32_t apply_rope_cache(void*, const ropecheck_plugin_cache_call* call) {
  return guarded([&] {
    const ropecheck_plugin_spec& spec = *call->spec;
    const ropecheck_plugin_cache& c = *call->cache;
    if (!rotation_supported(spec)) return ROPECHECK_PLUGIN_UNSUPPORTED;
    if (call->tokens == 0) return ROPECHECK_PLUGIN_OK;
    const std::int64_t t = call->tokens;
    const at::Tensor positions = wrap_positions(call->positions, t).reshape({-1});
    at::Tensor cos, sin;
    cos_sin_for(positions, spec.base, spec.rotary_dim, cos, sin);
    // vLLM rotates every token, a padding token's q too; only the cache write skips it.
    const at::Tensor q = wrap(call->q, t, call->q_heads, spec.head_dim)[0];
    q.copy_(forward_native(q, cos, sin, spec));
    const at::Tensor key = forward_native(wrap(const_cast<float*>(call->k), t, c.kv_heads, c.head_dim)[0], cos,
                                          sin, spec);
    const std::int64_t v_dim = c.layout == ROPECHECK_CACHE_MLA ? c.latent_dim : c.head_dim;
    const at::Tensor value = wrap(const_cast<float*>(call->v), t, c.kv_heads, v_dim)[0];

    // slot_mapping: the kernels return early on slot_idx < 0; the valid tokens' block and offset.
    const at::Tensor slot_mapping =
        at::from_blob(const_cast<std::int64_t*>(call->slots), {t}, at::TensorOptions().dtype(at::kLong));
    const at::Tensor valid = slot_mapping >= 0;
    const at::Tensor slots = slot_mapping.index({valid});
    const at::Tensor block_idx = at::div(slots, c.block_size, "floor");
    const at::Tensor block_offset = slots % c.block_size;
    const std::vector<TensorIndex> index = {TensorIndex(block_idx), TensorIndex(block_offset)};
    at::Tensor key_cache = wrap_cache(call->k_cache, c);
    if (c.layout == ROPECHECK_CACHE_MLA) {
      // concat_and_cache_mla: kv_cache[block_idx, block_offset] = cat(kv_c, k_pe), one scale.
      const at::Tensor rows = at::cat({value.index({valid}).select(1, 0), key.index({valid}).select(1, 0)}, -1);
      store_rows(key_cache, index, rows, c, c.k_scale, c.k_scale_count, false);
      return ROPECHECK_PLUGIN_OK;
    }
    // reshape_and_cache_flash: key_cache[block_idx, block_offset, :, :] = key[i] (and value).
    store_rows(key_cache, index, key.index({valid}), c, c.k_scale, c.k_scale_count, false);
    store_rows(wrap_cache(call->v_cache, c), index, value.index({valid}), c, c.v_scale, c.v_scale_count, false);
    return ROPECHECK_PLUGIN_OK;
  });
}

std::int32_t query_capabilities(void*, ropecheck_plugin_capabilities* caps) {
  rope_capabilities(caps);
  return ROPECHECK_PLUGIN_OK;
}

std::int32_t query_rope_cache_capabilities(void*, ropecheck_plugin_cache_capabilities* caps) {
  caps->layouts = (1u << ROPECHECK_CACHE_NHD) | (1u << ROPECHECK_CACHE_MLA);
  caps->storages = (1u << ROPECHECK_CACHE_FP32) | (1u << ROPECHECK_CACHE_BF16) | (1u << ROPECHECK_CACHE_FP16) |
                   (1u << ROPECHECK_CACHE_FP8_E4M3) | (1u << ROPECHECK_CACHE_FP8_E5M2);
  caps->scale_directions = 1u << ROPECHECK_SCALE_DIVIDE;  // vLLM: x / scale
  caps->padding = ROPECHECK_PADDING_ROTATE_Q_ONLY;
  return ROPECHECK_PLUGIN_OK;
}

const ropecheck_plugin_v5 kPlugin = {
    ROPECHECK_PLUGIN_ABI_V5,
    sizeof(ropecheck_plugin_v5),
    "torch_vllm_cache",
    "PyTorch peer: vLLM's torch references, RotaryEmbedding.forward_native + reshape_and_cache_flash / "
    "concat_and_cache_mla (NHD, MLA; fp32, bf16, fp16, FP8 divided and clamped), padding rotates q only",
    nullptr,
    query_capabilities,
    apply,
    nullptr,
    nullptr,  // no backward: an inference path
    apply_rope_cache,
    query_rope_cache_capabilities,
    {nullptr},
};

}  // namespace

extern "C" ROPECHECK_PLUGIN_EXPORT const ropecheck_plugin_v5* ropecheck_plugin_entry(void) { return &kPlugin; }
