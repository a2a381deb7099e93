# RoPE in the engines' call forms in numpy, on the contract of docs/porting.md ("Python: the call
# forms"): q and k are strided views (numpy.lib.stride_tricks.as_strided) into ropecheck's shared
# buffer, written in place; angles from the spec (float64) or from the cos/sin cache; QK-norm with
# either weight convention in float32 before the rotation. bf16 arrives as the uint16 top half of
# a float32 (numpy has no bf16) and is written back rounded to nearest even.
#   ropecheck verify --python plugins/examples/python/numpy_rope_form.py:apply
import numpy as np


def widen(x, storage):
    """The view's values as float32 (a new array)."""
    if storage == "bf16":
        return (x.astype(np.uint32) << 16).view(np.float32)
    return x.astype(np.float32)


def narrow(y, storage):
    """float32 values as the buffer keeps them."""
    if storage == "bf16":  # round to nearest even into the top 16 bits
        bits = y.astype(np.float32).view(np.uint32)
        return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return y.astype(np.float16 if storage == "fp16" else np.float32)


def cos_sin(positions, cache, spec):
    """[tokens, rotary_dim / 2] each: the cache's rows, or the spec's angles in float64."""
    half = spec["rotary_dim"] // 2
    if cache is not None:
        rows = cache[positions]
        return rows[:, :half].astype(np.float64), rows[:, half:].astype(np.float64)
    inv_freq = spec["base"] ** (-np.arange(0, spec["rotary_dim"], 2, dtype=np.float64) / spec["rotary_dim"])
    angles = positions.astype(np.float64)[:, None] * inv_freq
    return np.cos(angles), np.sin(angles)


def rms_norm(x, weight, norm):
    """Each head over all its features, in float32: x / sqrt(mean(x^2) + eps) * w (or 1 + w)."""
    mean = np.mean(x * x, axis=-1, keepdims=True, dtype=np.float32)
    factor = weight + np.float32(1) if norm["weight"] == "one_plus" else weight
    return x * (np.float32(1) / np.sqrt(mean + np.float32(norm["eps"]))) * factor


def apply(q, k, positions, cos_sin_cache, norm, spec, form):
    """numpy, a call form: strided views written in place, a cos/sin cache or float64 angles, QK-norm in float32"""
    d = spec["rotary_dim"]
    cos, sin = cos_sin(positions, cos_sin_cache, spec)
    cos, sin = cos[:, None, :], sin[:, None, :]
    first, second = (slice(0, d, 2), slice(1, d, 2)) if spec["layout"] == "interleaved" else (
        slice(0, d // 2), slice(d // 2, d))
    for x, weight in ((q, norm and norm["q_weight"]), (k, norm and norm["k_weight"])):
        if x is None:
            continue
        values = widen(x, form["storage"])
        if norm is not None:
            values = rms_norm(values, weight, norm)
        a, b = values[..., first].astype(np.float64), values[..., second].astype(np.float64)
        values[..., first], values[..., second] = a * cos - b * sin, a * sin + b * cos
        x[...] = narrow(values, form["storage"])  # through the view: into the buffer


apply.ropecheck = {"rope_form": {"storage": ["fp32", "bf16", "fp16"], "angle_sources": ["spec", "cos_sin_cache"],
                                 "norm_weights": ["plain", "one_plus"], "norm_precision": "fp32"},
                   "angles": "fp64", "layouts": ["interleaved", "half_split"]}
