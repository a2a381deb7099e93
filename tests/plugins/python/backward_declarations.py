# Declarations of a backward pass that ropecheck must refuse (exit 2, one line), and PyTorch
# forwards that break torch.autograd's graph in the ways torch itself raises on: each must be a
# FAILED property saying so, not a crash (tests/plugins/python_test.cc). torch is imported inside
# the functions: the refusals need no torch.


def _forward(q, k, positions, spec):
    pass


def _two_arguments(q, k):
    pass


def backward_not_callable(q, k, positions, spec):
    pass


def backward_name_missing(q, k, positions, spec):
    pass


def backward_cannot_take_the_call(q, k, positions, spec):
    pass


def both_declared(q, k, positions, spec):
    pass


def autograd_on_bf16(q, k, positions, spec):
    pass


def autograd_declared(q, k, positions, spec):
    """a PyTorch forward ropecheck cannot differentiate where torch does not import"""
    return q, k


def _angles(positions, spec):
    import torch
    d = spec["rotary_dim"]
    inv_freq = spec["base"] ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angles = torch.tensor(positions, dtype=torch.float64)[:, None] * inv_freq[None, :]
    return angles.cos().float()[:, None, :], angles.sin().float()[:, None, :]


def rotates_in_place(q, k, positions, spec):
    """the interleaved rotation written into q and k, as a forward without autograd may"""
    cos, sin = _angles(positions, spec)
    d = spec["rotary_dim"]
    for x in (q, k):
        a, b = x[..., 0:d:2].clone(), x[..., 1:d:2].clone()
        x[..., 0:d:2] = a * cos - b * sin
        x[..., 1:d:2] = a * sin + b * cos


def calls_numpy(q, k, positions, spec):
    """the rotation in numpy on q.numpy(), which torch refuses on a tensor that requires grad"""
    import torch
    return torch.from_numpy(q.numpy().copy()), torch.from_numpy(k.numpy().copy())


backward_not_callable.ropecheck = {"backward": 42}
backward_name_missing.ropecheck = {"backward": "no_such_backward"}
backward_cannot_take_the_call.ropecheck = {"backward": _two_arguments}
both_declared.ropecheck = {"backward": "_forward", "autograd": True}
autograd_on_bf16.ropecheck = {"autograd": True, "storage": "bf16"}
autograd_declared.ropecheck = {"autograd": True}
rotates_in_place.ropecheck = {"layouts": ["interleaved"], "angles": "fp64", "autograd": True}
calls_numpy.ropecheck = {"layouts": ["interleaved"], "angles": "fp64", "autograd": True}
