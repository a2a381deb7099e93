# numpy RoPEs on 16-bit storage, as the contract passes it: fp16 as numpy float16, bf16 as uint16
# bit patterns (the top half of a float32). Both must pass (tests/plugins/python_test.cc).
import numpy as np


def _rotate(q, k, positions, spec, widen, narrow):
    d = spec["rotary_dim"]
    inv_freq = spec["base"] ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    angles = positions.astype(np.float64)[:, None] * inv_freq
    cos, sin = np.cos(angles)[:, None, :], np.sin(angles)[:, None, :]
    if spec["layout"] == "interleaved":
        first, second = slice(0, d, 2), slice(1, d, 2)
    else:
        first, second = slice(0, d // 2), slice(d // 2, d)
    for x in (q, k):
        a, b = widen(x[..., first]), widen(x[..., second])
        x[..., first], x[..., second] = narrow(a * cos - b * sin), narrow(a * sin + b * cos)


def fp16(q, k, positions, spec):
    if q.dtype != np.float16:
        raise TypeError("q is %s, not float16" % q.dtype)
    _rotate(q, k, positions, spec, lambda h: h.astype(np.float64), lambda f: f.astype(np.float32).astype(np.float16))


def _bf16_narrow(f):
    bits = f.astype(np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)  # round to nearest even


def bf16(q, k, positions, spec):
    if q.dtype != np.uint16:
        raise TypeError("q is %s, not uint16 bf16 bit patterns" % q.dtype)
    _rotate(q, k, positions, spec, lambda u: (u.astype(np.uint32) << 16).view(np.float32).astype(np.float64),
            _bf16_narrow)


fp16.ropecheck = {"angles": "fp64", "storage": "fp16"}
bf16.ropecheck = {"angles": "fp64", "storage": "bf16"}


def echo_spec(q, k, positions, spec):
    """Raises with the spec dict it was given, so that a test can read it in the failure."""
    import json
    raise LookupError(json.dumps(spec, sort_keys=True))


echo_spec.ropecheck = {"scaling": ["linear", "ntk", "dynamic", "yarn", "llama3", "longrope"], "angles": "fp64"}
