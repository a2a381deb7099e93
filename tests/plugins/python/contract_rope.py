# A numpy RoPE written from docs/porting.md's Python contract alone (no ropecheck code), and the
# same with one real bug each: every variant must make `ropecheck verify --python` exit 1 while
# `correct` passes (tests/plugins/python_test.cc).
import numpy as np

_cache = {}


def _rotate(x, cos, sin, layout, d, sign=1.0, partner=None):
    if layout == "interleaved":
        first, second = slice(0, d, 2), slice(1, d, 2)
    else:
        half = d // 2 if partner is None else partner
        first, second = slice(0, d // 2), slice(half, half + d // 2)
    a = x[..., first].astype(np.float64)
    b = x[..., second].astype(np.float64)
    x[..., first] = a * cos - sign * b * sin
    x[..., second] = sign * a * sin + b * cos


def _angles(positions, base, d, dtype=np.float64):
    inv_freq = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    m = positions.astype(dtype).astype(np.float64)
    angles = m[:, None] * inv_freq[None, :]
    return np.cos(angles)[:, None, :], np.sin(angles)[:, None, :]


def correct(q, k, positions, spec):
    d = spec["rotary_dim"]
    cos, sin = _angles(positions, spec["base"], d)
    _rotate(q, cos, sin, spec["layout"], d)
    _rotate(k, cos, sin, spec["layout"], d)


def sign_error_interleaved(q, k, positions, spec):
    # The sin sign flipped on the interleaved path only: half-split is right.
    d = spec["rotary_dim"]
    cos, sin = _angles(positions, spec["base"], d)
    sign = -1.0 if spec["layout"] == "interleaved" else 1.0
    _rotate(q, cos, sin, spec["layout"], d, sign)
    _rotate(k, cos, sin, spec["layout"], d, sign)


def positions_fp16(q, k, positions, spec):
    # Positions stored in float16 on the way: exact up to 2048, rounded beyond.
    d = spec["rotary_dim"]
    cos, sin = _angles(positions, spec["base"], d, np.float16)
    _rotate(q, cos, sin, spec["layout"], d)
    _rotate(k, cos, sin, spec["layout"], d)


def half_split_partner_from_head_dim(q, k, positions, spec):
    # Half-split pairs (i, i + head_dim/2): right only when rotary_dim == head_dim.
    d = spec["rotary_dim"]
    cos, sin = _angles(positions, spec["base"], d)
    partner = spec["head_dim"] // 2
    _rotate(q, cos, sin, spec["layout"], d, partner=partner)
    _rotate(k, cos, sin, spec["layout"], d, partner=partner)


def cached_across_calls(q, k, positions, spec):
    # cos/sin cached by (rotary_dim, tokens): a later call with other positions reuses them.
    d = spec["rotary_dim"]
    key = (d, len(positions))
    if key not in _cache:
        _cache[key] = _angles(positions, spec["base"], d)
    cos, sin = _cache[key]
    _rotate(q, cos, sin, spec["layout"], d)
    _rotate(k, cos, sin, spec["layout"], d)


def base_ignored(q, k, positions, spec):
    d = spec["rotary_dim"]
    cos, sin = _angles(positions, 10000.0, d)
    _rotate(q, cos, sin, spec["layout"], d)
    _rotate(k, cos, sin, spec["layout"], d)


def k_left_alone(q, k, positions, spec):
    d = spec["rotary_dim"]
    cos, sin = _angles(positions, spec["base"], d)
    _rotate(q, cos, sin, spec["layout"], d)


def raises_on_some_shapes(q, k, positions, spec):
    if q.shape[1] != k.shape[1] and k.shape[1] != 0:
        raise ValueError("grouped-query attention is not supported (%d q heads, %d k heads)" % (q.shape[1], k.shape[1]))
    correct(q, k, positions, spec)


# The precision the contract's default declares is fp32 angles; these form them in float64.
for _f in (correct, sign_error_interleaved, positions_fp16, half_split_partner_from_head_dim, cached_across_calls,
           base_ignored, k_left_alone, raises_on_some_shapes):
    _f.ropecheck = {"angles": "fp64"}
