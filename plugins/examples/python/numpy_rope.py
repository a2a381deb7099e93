# A RoPE in numpy that follows only the contract of docs/porting.md ("Python"): rotates q and k
# in place, both layouts, partial rotary, linear scaling, angles formed in float64.
#   ropecheck verify --python plugins/examples/python/numpy_rope.py:apply
import numpy as np


def apply(q, k, positions, spec):
    """numpy reference: float64 angles, interleaved and half-split, partial rotary, linear scaling"""
    d = spec["rotary_dim"]
    inv_freq = spec["base"] ** (-np.arange(0, d, 2, dtype=np.float64) / d)  # theta_i
    scaling, scale = spec["rope_scaling"], 1.0
    if scaling is not None:  # declared below: linear only, positions / factor
        inv_freq = inv_freq / scaling["factor"]
        scale = scaling["attention_factor"]  # cos and sin times it (1 unless a model sets one)
    angles = positions.astype(np.float64)[:, None] * inv_freq[None, :]  # [tokens, d/2]
    cos = scale * np.cos(angles)[:, None, :]  # broadcast over heads
    sin = scale * np.sin(angles)[:, None, :]
    if spec["layout"] == "interleaved":
        first, second = slice(0, d, 2), slice(1, d, 2)  # pairs (2i, 2i+1)
    else:
        first, second = slice(0, d // 2), slice(d // 2, d)  # pairs (i, i + d/2)
    for x in (q, k):  # k may have no heads: the slices are then empty
        a = x[..., first].astype(np.float64)
        b = x[..., second].astype(np.float64)
        x[..., first] = a * cos - b * sin
        x[..., second] = a * sin + b * cos


apply.ropecheck = {"layouts": ["interleaved", "half_split"], "angles": "fp64", "scaling": ["linear"]}
