# RoPE's forward and backward in numpy on the contract of docs/porting.md ("Python"), the backward
# declared by name ("backward": "apply_backward"): a training kernel's gradient
#   dx = a R(m)^T dy, pair (x1, x2) -> (x1 cos + x2 sin, -x1 sin + x2 cos), cos and sin times a,
# the forward's rotation with the sine negated; the attention factor a multiplies the gradient too;
# the tail's gradient passes through. Both layouts, partial rotary, linear and YaRN scaling (YaRN's
# a != 1), angles in float64.
#   ropecheck verify --python plugins/examples/python/backward_rope.py:apply
#
# The other forwards are the same one with a backward that has one real bug each (what
# plugins/examples/backward_rope.c builds in C): `ropecheck verify` must exit 1 on every one of
# them, on the backward properties (tests/plugins/python_test.cc).
import math

import numpy as np


def inverse_frequencies(spec):
    """theta_i, scaled as spec["rope_scaling"] says (HF's names; linear or yarn, as declared)."""
    d, base, scaling = spec["rotary_dim"], spec["base"], spec["rope_scaling"]
    i = np.arange(d // 2, dtype=np.float64)
    theta = base ** (-2 * i / d)
    if scaling is None:
        return theta
    factor = scaling["factor"]
    if scaling["rope_type"] == "linear":
        return theta / factor
    # yarn: a ramp between theta / factor and theta over the correction dims
    dim = lambda rotations: d * math.log(scaling["original_max_position_embeddings"] / (2 * math.pi * rotations)) / (
        2 * math.log(base))
    low, high = dim(scaling["beta_fast"]), dim(scaling["beta_slow"])
    if scaling["truncate"]:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d - 1)
    ramp = np.clip((i - low) / ((high - low) or 0.001), 0, 1)
    return theta / factor * ramp + theta * (1 - ramp)


def tables(positions, spec, sin_sign=1.0, with_factor=True):
    """cos and sin of every token's pairs, [tokens, 1, d/2], times the attention factor."""
    scaling = spec["rope_scaling"]
    a = scaling["attention_factor"] if scaling is not None and with_factor else 1.0
    angles = positions.astype(np.float64)[:, None] * inverse_frequencies(spec)[None, :]
    return a * np.cos(angles)[:, None, :], sin_sign * a * np.sin(angles)[:, None, :]


def rotate(q, k, spec, cos, sin):
    """(x1, x2) -> (x1 cos - x2 sin, x1 sin + x2 cos) on every pair, in place; the tail untouched."""
    d = spec["rotary_dim"]
    if spec["layout"] == "interleaved":
        first, second = slice(0, d, 2), slice(1, d, 2)
    else:
        first, second = slice(0, d // 2), slice(d // 2, d)
    for x in (q, k):  # k may have no heads
        x1, x2 = x[..., first].astype(np.float64), x[..., second].astype(np.float64)
        x[..., first] = x1 * cos - x2 * sin
        x[..., second] = x1 * sin + x2 * cos


def apply(q, k, positions, spec):
    """numpy forward and backward (declared by name): a R(m) x, and a R(m)^T dy"""
    rotate(q, k, spec, *tables(positions, spec))


def apply_backward(q, k, positions, spec):
    """dy in q and k, dx out: R^T is R with the sine negated"""
    rotate(q, k, spec, *tables(positions, spec, sin_sign=-1.0))


def sin_not_flipped_backward(q, k, positions, spec):
    rotate(q, k, spec, *tables(positions, spec))  # the forward again: R dy for R^T dy


def factor_dropped_backward(q, k, positions, spec):
    rotate(q, k, spec, *tables(positions, spec, sin_sign=-1.0, with_factor=False))  # the gradient of R x, not a R x


def tail_zeroed_backward(q, k, positions, spec):
    apply_backward(q, k, positions, spec)
    for x in (q, k):
        x[..., spec["rotary_dim"]:] = 0  # the gradient built in np.zeros_like(dy): the tail's lost


def sin_not_flipped(q, k, positions, spec):
    """the right forward; its backward runs the forward's rotation again"""
    apply(q, k, positions, spec)


def factor_dropped(q, k, positions, spec):
    """the right forward; its backward leaves the attention factor out"""
    apply(q, k, positions, spec)


def tail_zeroed(q, k, positions, spec):
    """the right forward; its backward zeroes the tail's gradient"""
    apply(q, k, positions, spec)


for _f, _backward in ((apply, apply_backward), (sin_not_flipped, sin_not_flipped_backward),
                      (factor_dropped, factor_dropped_backward), (tail_zeroed, tail_zeroed_backward)):
    _f.ropecheck = {"scaling": ["linear", "yarn"], "angles": "fp64", "backward": _backward.__name__}
