# A deliberately broken numpy RoPE: the half-split partner of pair i is taken as i + head_dim/2
# instead of i + rotary_dim/2, which is right only when the whole head rotates. `ropecheck verify`
# must FAIL it (partial_rotary, oracle_agreement) with a counterexample that has rotary_dim <
# head_dim.   ropecheck verify --python plugins/examples/python/broken_rope.py:apply
import numpy as np


def apply(q, k, positions, spec):
    """broken: half-split partner from head_dim, not rotary_dim (a partial-rotary bug)"""
    d, head_dim = spec["rotary_dim"], spec["head_dim"]
    inv_freq = spec["base"] ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    angles = positions.astype(np.float64)[:, None] * inv_freq[None, :]
    cos, sin = np.cos(angles)[:, None, :], np.sin(angles)[:, None, :]
    half = head_dim // 2  # the bug: rotary_dim // 2
    first, second = slice(0, d // 2), slice(half, half + d // 2)
    for x in (q, k):
        a, b = x[..., first].astype(np.float64), x[..., second].astype(np.float64)
        x[..., first] = a * cos - b * sin
        x[..., second] = a * sin + b * cos


apply.ropecheck = {"layouts": "half_split", "angles": "fp64"}
