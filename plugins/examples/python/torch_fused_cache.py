# RoPE fused with the paged KV-cache write, as vLLM's PyTorch reference forms write it, on the
# contract of docs/porting.md ("Python: the fused cache call"): the rotation of
# RotaryEmbedding.forward_native (cos and sin from a float32 inv_freq, NeoX or GPT-J pairs, the
# features past rotary_dim passed through), then the write of reshape_and_cache_flash (block =
# slot // block_size, offset = slot % block_size, a padding slot below 0 skipped) or, for MLA,
# concat_and_cache_mla (the latent kv_c, then the rotated k_pe). FP8 is quantized with the scale
# in its declared direction and clamped to the format's largest value before the cast: an eager
# .to(float8) turns what lies past it into NaN (e4m3) or Inf (e5m2). Tensors come in on the
# declared device and are written in place.
#   ropecheck verify --python plugins/examples/python/torch_fused_cache.py:vllm_fused
import torch

torch.set_num_threads(1)

FP8_MAX = {"fp8_e4m3": 448.0, "fp8_e5m2": 57344.0}
# (mantissa bits, exponent bias, the bits a cast past the largest value gives: NaN for e4m3fn, Inf for e5m2)
FP8_FORMAT = {"fp8_e4m3": (3, 7, 0x7F), "fp8_e5m2": (2, 15, 0x7C)}
# None where this torch has no float8 dtypes (before 2.1): then the caches are uint8 bit patterns.
FP8_DTYPE = {"fp8_e4m3": getattr(torch, "float8_e4m3fn", None), "fp8_e5m2": getattr(torch, "float8_e5m2", None)}


# --- the rotation (vllm/model_executor/layers/rotary_embedding.py) ---

def compute_cos_sin(positions, spec, device):
    # _compute_inv_freq and _compute_cos_sin_cache, for the call's positions rather than a table of
    # max_position rows (the positions may be negative or reach 2^24); formed on the CPU, as the
    # table is built with the model, then moved to the tensors' device.
    rotary_dim = spec["rotary_dim"]
    inv_freq = 1.0 / (spec["base"] ** (torch.arange(0, rotary_dim, 2, dtype=torch.float) / rotary_dim))
    freqs = torch.einsum("i,j -> ij", positions.cpu().float(), inv_freq)
    return freqs.cos().to(device), freqs.sin().to(device)


def apply_rotary_emb_torch(x, cos, sin, is_neox_style):
    cos = cos.unsqueeze(-2).to(x.dtype)
    sin = sin.unsqueeze(-2).to(x.dtype)
    if is_neox_style:
        x1, x2 = torch.chunk(x, 2, dim=-1)
    else:
        x1 = x[..., ::2]
        x2 = x[..., 1::2]
    o1 = x1 * cos - x2 * sin
    o2 = x2 * cos + x1 * sin
    if is_neox_style:
        return torch.cat((o1, o2), dim=-1)
    return torch.stack((o1, o2), dim=-1).flatten(-2)


def rotate(x, cos, sin, spec):
    # forward_native: query_rot, query_pass = query[..., :rotary_dim], query[..., rotary_dim:]
    rotary_dim = spec["rotary_dim"]
    x_rot = apply_rotary_emb_torch(x[..., :rotary_dim], cos, sin, spec["layout"] == "half_split")
    return torch.cat((x_rot, x[..., rotary_dim:]), dim=-1)


# --- FP8 (vLLM's scaled_fp8_conversion: the scale, then a saturating cast) ---

def fp8_bits(x, storage):
    """float32 x as the bits torch's cast to float8_e4m3fn / float8_e5m2 gives (round to nearest
    even; NaN or Inf past the largest value), for a torch that has no float8 dtypes."""
    mantissa_bits, bias, overflow_bits = FP8_FORMAT[storage]
    sign = torch.signbit(x).to(torch.int32) << 7
    a = x.abs()
    # The spacing of a's binade (a = m 2^e, m in [0.5, 1)), or of the subnormals below 2^(1 - bias).
    e = torch.clamp(torch.frexp(a).exponent - 1, min=1 - bias)
    step = torch.ldexp(torch.ones_like(a), e - mantissa_bits)
    r = torch.round(a / step) * step  # round half to even, exactly: a / step is a power-of-two scaling
    e_r = torch.frexp(r).exponent - 1
    normal = r >= 2.0 ** (1 - bias)
    exponent_field = torch.where(normal, e_r + bias, torch.zeros_like(e_r))
    fraction = torch.where(normal, torch.ldexp(r, -e_r) - 1, torch.ldexp(r, torch.full_like(e_r, bias - 1)))
    mantissa_field = torch.ldexp(fraction, torch.full_like(e_r, mantissa_bits)).to(torch.int32)
    bits = sign | (exponent_field << mantissa_bits) | mantissa_field
    bits = torch.where(r > FP8_MAX[storage], sign | overflow_bits, bits)
    return bits.to(torch.uint8)


def to_fp8(stored, storage):
    """The stored-domain values (x * scale or x / scale) as FP8 bit patterns, saturated."""
    fp8_max = FP8_MAX[storage]
    stored = stored.clamp(-fp8_max, fp8_max)  # saturate first: the cast alone gives NaN or Inf past the max
    if FP8_DTYPE[storage] is not None:
        return stored.to(FP8_DTYPE[storage]).view(torch.uint8)
    return fp8_bits(stored, storage)


def quantize_into(cache_tensor, index, rows, scale, cache):
    """cache_tensor[index] = rows in the cache's storage: FP8 scaled in the declared direction."""
    storage = cache["storage"]
    if storage not in FP8_MAX:
        cache_tensor[index] = rows.to(cache_tensor.dtype)
        return
    # One scale per tensor, or one per kv head: [heads, 1] broadcasts over [tokens, heads, dim].
    scale = torch.tensor(scale, dtype=torch.float32, device=rows.device).reshape(-1, 1)
    stored = rows * scale if cache["scale_direction"] == "multiply" else rows / scale
    cache_tensor.view(torch.uint8)[index] = to_fp8(stored, storage)


# --- the write (vLLM's reference forms of reshape_and_cache_flash and concat_and_cache_mla) ---

def block_and_offset(slot_mapping, cache):
    valid = slot_mapping >= 0  # the kernels' `if (slot_idx < 0) return;`: a padding token
    slots = slot_mapping[valid]
    block_idx = torch.div(slots, cache["block_size"], rounding_mode="floor")
    block_offset = slots % cache["block_size"]
    return valid, block_idx, block_offset


def reshape_and_cache_flash(key, value, key_cache, value_cache, slot_mapping, cache):
    valid, block_idx, block_offset = block_and_offset(slot_mapping, cache)
    if cache["layout"] == "nhd":  # [blocks, block_size, kv_heads, head_dim]
        index = (block_idx, block_offset)
    else:  # hnd: [blocks, kv_heads, block_size, head_dim]
        index = (block_idx, slice(None), block_offset)
    quantize_into(key_cache, index, key[valid], cache["k_scale"], cache)
    quantize_into(value_cache, index, value[valid], cache["v_scale"], cache)


def concat_and_cache_mla(kv_c, k_pe, kv_cache, slot_mapping, cache):
    # [blocks, block_size, kv_lora_rank + pe_dim]: the latent, then the rotated k_pe; one scale.
    valid, block_idx, block_offset = block_and_offset(slot_mapping, cache)
    rows = torch.cat((kv_c[valid, 0], k_pe[valid, 0]), dim=-1)
    quantize_into(kv_cache, (block_idx, block_offset), rows, cache["k_scale"], cache)


def write_cache(k_rot, v, k_cache, v_cache, slots, cache):
    if cache["layout"] == "mla":
        concat_and_cache_mla(v, k_rot, k_cache, slots, cache)  # v is kv_c, k is k_pe
    else:
        reshape_and_cache_flash(k_rot, v, k_cache, v_cache, slots, cache)


# --- the fused calls ---

def vllm_fused(q, k, v, positions, slots, k_cache, v_cache, spec, cache):
    """PyTorch, vLLM's forward_native rotation + reshape_and_cache_flash / concat_and_cache_mla, CPU"""
    cos, sin = compute_cos_sin(positions, spec, q.device)
    # vLLM rotates every token, a padding token's q too, then skips its cache write.
    q[...] = rotate(q, cos, sin, spec)
    write_cache(rotate(k, cos, sin, spec), v, k_cache, v_cache, slots, cache)


def vllm_fused_skip_padding(q, k, v, positions, slots, k_cache, v_cache, spec, cache):
    """PyTorch, the same with a padding token skipped whole (its q left as it came), CPU"""
    valid = slots >= 0
    cos, sin = compute_cos_sin(positions[valid], spec, q.device)
    q[valid] = rotate(q[valid], cos, sin, spec)
    k_rot = torch.zeros_like(k)
    k_rot[valid] = rotate(k[valid], cos, sin, spec)  # a padding token's k is never written
    write_cache(k_rot, v, k_cache, v_cache, slots, cache)


def vllm_fused_cuda(q, k, v, positions, slots, k_cache, v_cache, spec, cache):
    """PyTorch, vllm_fused on the GPU (the tensors handed over there, copied back after the call)"""
    vllm_fused(q, k, v, positions, slots, k_cache, v_cache, spec, cache)


# Every cache layout, storage and direction; the rotation in both pair layouts, angles in float32.
EVERY_CACHE = {"layouts": ["nhd", "hnd", "mla"], "storage": ["fp32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2"],
               "directions": ["multiply", "divide"]}
vllm_fused.ropecheck = {"fused_cache": dict(EVERY_CACHE, padding="rotate_q_only"), "tensors": "torch",
                        "device": "cpu", "layouts": ["interleaved", "half_split"], "angles": "fp32"}
vllm_fused_skip_padding.ropecheck = dict(vllm_fused.ropecheck, fused_cache=dict(EVERY_CACHE, padding="skip_token"))
vllm_fused_cuda.ropecheck = dict(vllm_fused.ropecheck, device="cuda")
