# RoPE fused with the paged KV-cache write in numpy, on the contract of docs/porting.md ("Python:
# the fused cache call"): the arrays are views of ropecheck's shared memory, q and the caches
# written in place. Angles in float64; caches of float32, float16 or bf16 (numpy keeps bf16 as the
# uint16 top half of a float32, rounded here to nearest even); a padding token skipped whole.
#   ropecheck verify --python plugins/examples/python/numpy_fused_cache.py:apply
import numpy as np


def rotate(x, positions, spec):
    """x [tokens, heads, head_dim] rotated, a new float32 array (the tail past rotary_dim kept)."""
    d = spec["rotary_dim"]
    inv_freq = spec["base"] ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    angles = positions.astype(np.float64)[:, None] * inv_freq  # [tokens, d/2]
    cos, sin = np.cos(angles)[:, None, :], np.sin(angles)[:, None, :]
    if spec["layout"] == "interleaved":
        first, second = slice(0, d, 2), slice(1, d, 2)
    else:
        first, second = slice(0, d // 2), slice(d // 2, d)
    out = x.copy()
    a, b = x[..., first].astype(np.float64), x[..., second].astype(np.float64)
    out[..., first], out[..., second] = a * cos - b * sin, a * sin + b * cos
    return out


def stored(rows, storage):
    """float32 rows as the cache keeps them."""
    if storage == "bf16":  # round to nearest even into the top 16 bits
        bits = rows.astype(np.float32).view(np.uint32)
        return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return rows.astype(np.float16 if storage == "fp16" else np.float32)


def apply(q, k, v, positions, slots, k_cache, v_cache, spec, cache):
    """numpy, rotate then write the paged cache in one call (float64 angles; fp32, fp16, bf16 caches)"""
    valid = slots >= 0
    q[valid] = rotate(q[valid], positions[valid], spec)
    k_rot = rotate(k[valid], positions[valid], spec)
    block, offset = slots[valid] // cache["block_size"], slots[valid] % cache["block_size"]
    if cache["layout"] == "mla":  # [blocks, block_size, latent + rope]: kv_c (v), then k_pe
        k_cache[block, offset] = stored(np.concatenate((v[valid, 0], k_rot[:, 0]), axis=-1), cache["storage"])
        return
    index = (block, offset) if cache["layout"] == "nhd" else (block, slice(None), offset)
    k_cache[index] = stored(k_rot, cache["storage"])
    v_cache[index] = stored(v[valid], cache["storage"])


apply.ropecheck = {"fused_cache": {"layouts": ["nhd", "hnd", "mla"], "storage": ["fp32", "fp16", "bf16"],
                                   "padding": "skip_token"},
                   "angles": "fp64"}
