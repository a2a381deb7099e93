// torch_flashinfer_cache: RoPE fused with the paged KV-cache append as FlashInfer's torch reference
// computes it (the reference its tests judge rope_quantize_fp8_append_paged_kv_cache and
// append_paged_kv_cache / append_paged_mla_kv_cache against), op for op, through the torch C++ API
// (ATen), exported through the plugin ABI 5 (plugins/include/ropecheck/plugin.h).
//
// Sources mirrored: FlashInfer's tests/attention/test_rope.py: the rotation is its
// FlashInferRotaryEmbedding.forward_native (a copy of vLLM's RotaryEmbedding, fused_cache_common.h),
// applied to the appended tokens only; the cache reference writes, for each appended token,
//   page_idx = kv_page_indices[page_iter], entry_idx = position % page_size
//   NHD: k_cache[page_idx, entry_idx, :, :] = k      HND: k_cache[page_idx, :, entry_idx, :] = k
//   MLA: ckv_cache[page_idx, entry_idx, :] = ckv,    kpe_cache[page_idx, entry_idx, :] = kpe
// with FP8 as (x * quant_scale_kv).to(float8), the scale MULTIPLIED (FlashInfer's convention).
// Here a token's slot is its page * page_size + entry (the page table the identity), and MLA's two
// caches are the two column ranges of ropecheck's one [kv_c | k_pe] row.
// What FlashInfer does, declared: NHD, HND and MLA; fp32, bf16, fp16 by torch's casts; FP8 e4m3 and
// e5m2, multiplied, clamped to the format's largest value (FlashInfer's kernels saturate) and rounded
// as torch 1.13's ops can (fused_cache_common.h, fp8_bits; torch 1.13 has no float8 dtype);
// padding skip_token: FlashInfer appends only the tokens its batch_indices / positions name, so a
// padding token (slot < 0) is not part of the call at all: its q is left as it came.
//
// Threads: peer_common.h (ROPECHECK_PLUGIN_THREADS, default 1).
#include "fused_cache_common.h"

namespace {

using namespace ropecheck_torch_peer;
using at::indexing::Slice;
using at::indexing::TensorIndex;

std::int32_t apply(void*, const ropecheck_plugin_call* call) { return apply_forward_native(call); }

std::int32_t apply_rope_cache(void*, const ropecheck_plugin_cache_call* call) {
  return guarded([&] {
    const ropecheck_plugin_spec& spec = *call->spec;
    const ropecheck_plugin_cache& c = *call->cache;
    if (!rotation_supported(spec)) return ROPECHECK_PLUGIN_UNSUPPORTED;
    if (call->tokens == 0) return ROPECHECK_PLUGIN_OK;
    const std::int64_t t = call->tokens;
    // The appended tokens: those with a slot. The rest never reach FlashInfer's kernels.
    const at::Tensor slots_all =
        at::from_blob(const_cast<std::int64_t*>(call->slots), {t}, at::TensorOptions().dtype(at::kLong));
    const at::Tensor appended = slots_all >= 0;
    const at::Tensor slots = slots_all.index({appended});
    const at::Tensor pos_ids = wrap_positions(call->positions, t).reshape({-1}).index({appended});
    at::Tensor cos, sin;
    cos_sin_for(pos_ids, spec.base, spec.rotary_dim, cos, sin);
    // q_out, k_out = rope_ref.forward_native(pos_ids, q_in, k_in): q written back to its tokens.
    const at::Tensor q = wrap(call->q, t, call->q_heads, spec.head_dim)[0];
    q.index_put_({appended}, forward_native(q.index({appended}), cos, sin, spec));
    const at::Tensor k =
        forward_native(wrap(const_cast<float*>(call->k), t, c.kv_heads, c.head_dim)[0].index({appended}), cos, sin,
                       spec);
    const std::int64_t v_dim = c.layout == ROPECHECK_CACHE_MLA ? c.latent_dim : c.head_dim;
    const at::Tensor v = wrap(const_cast<float*>(call->v), t, c.kv_heads, v_dim)[0].index({appended});

    const at::Tensor page_idx = at::div(slots, c.block_size, "floor");
    const at::Tensor entry_idx = slots % c.block_size;
    at::Tensor k_cache = wrap_cache(call->k_cache, c);
    if (c.layout == ROPECHECK_CACHE_MLA) {
      // append_paged_mla_kv_cache: ckv_cache and kpe_cache, here the row's two column ranges.
      const std::vector<TensorIndex> index = {TensorIndex(page_idx), TensorIndex(entry_idx)};
      store_rows(k_cache.narrow(-1, 0, c.latent_dim), index, v.select(1, 0), c, c.k_scale, c.k_scale_count, true);
      store_rows(k_cache.narrow(-1, c.latent_dim, c.head_dim), index, k.select(1, 0), c, c.k_scale, c.k_scale_count,
                 true);
      return ROPECHECK_PLUGIN_OK;
    }
    const std::vector<TensorIndex> index =
        c.layout == ROPECHECK_CACHE_HND
            ? std::vector<TensorIndex>{TensorIndex(page_idx), TensorIndex(Slice()), TensorIndex(entry_idx)}
            : std::vector<TensorIndex>{TensorIndex(page_idx), TensorIndex(entry_idx)};
    store_rows(k_cache, index, k, c, c.k_scale, c.k_scale_count, true);
    store_rows(wrap_cache(call->v_cache, c), index, v, c, c.v_scale, c.v_scale_count, true);
    return ROPECHECK_PLUGIN_OK;
  });
}

std::int32_t query_capabilities(void*, ropecheck_plugin_capabilities* caps) {
  rope_capabilities(caps);
  return ROPECHECK_PLUGIN_OK;
}

std::int32_t query_rope_cache_capabilities(void*, ropecheck_plugin_cache_capabilities* caps) {
  caps->layouts = (1u << ROPECHECK_CACHE_NHD) | (1u << ROPECHECK_CACHE_HND) | (1u << ROPECHECK_CACHE_MLA);
  caps->storages = (1u << ROPECHECK_CACHE_FP32) | (1u << ROPECHECK_CACHE_BF16) | (1u << ROPECHECK_CACHE_FP16) |
                   (1u << ROPECHECK_CACHE_FP8_E4M3) | (1u << ROPECHECK_CACHE_FP8_E5M2);
  caps->scale_directions = 1u << ROPECHECK_SCALE_MULTIPLY;  // FlashInfer: x * quant_scale_kv
  caps->padding = ROPECHECK_PADDING_SKIP_TOKEN;
  return ROPECHECK_PLUGIN_OK;
}

const ropecheck_plugin_v5 kPlugin = {
    ROPECHECK_PLUGIN_ABI_V5,
    sizeof(ropecheck_plugin_v5),
    "torch_flashinfer_cache",
    "PyTorch peer: FlashInfer's torch reference, forward_native + the paged append (NHD, HND, MLA; "
    "fp32, bf16, fp16, FP8 multiplied and clamped), padding skipped whole",
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
