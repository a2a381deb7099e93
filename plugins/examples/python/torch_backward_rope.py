# RoPE's backward from PyTorch, on the contract of docs/porting.md ("Python"): functions declared
# "autograd": True take q and k as torch tensors, and for a backward spec ropecheck runs them under
# torch.autograd (q and k leaves that require grad, torch.autograd.grad(outputs, inputs,
# grad_outputs=dy)) and judges the gradient it computes. One thread, as torch_rope.py.
#   hf_autograd      HF transformers' rotate_half and apply_rotary_pos_emb, its backward by autograd
#   fused_function   a fused RoPE as training kernels write one (Liger Kernel, TransformerEngine): a
#                    torch.autograd.Function whose backward is written by hand, dy * cos +
#                    rotate_half(dy) * (-sin): the forward's formula with the sine negated
# and two real bugs `ropecheck verify` must fail (tests/plugins/python_test.cc):
#   numpy_round_trip         the rotation done in numpy on q.detach().numpy(): right values, no graph
#   fused_sin_not_flipped    fused_function with the sine's sign kept in its backward
#   ropecheck verify --python plugins/examples/python/torch_backward_rope.py:hf_autograd
import numpy as np
import torch

torch.set_num_threads(1)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


def hf_cos_sin(dim, base, positions):
    """LlamaRotaryEmbedding's cos and sin, [tokens, dim]: fp32 angles, emb = cat(freqs, freqs)."""
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    freqs = torch.tensor(positions).float()[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def partial(q, k, spec, rotate):
    """Partial rotary: rotate the first rotary_dim features, the rest passes through (cat).

    torch.split, not Phi's two slices q[..., :d] and q[..., d:]: split's backward concatenates the
    two gradients, while two slices' backwards are added, zeros over the other's features, and a
    -0 of the tail's gradient comes back +0 (backward_tail_untouched sees the changed bit)."""
    d = spec["rotary_dim"]
    (q_rot, q_pass), (k_rot, k_pass) = (x.split([d, x.shape[-1] - d], dim=-1) for x in (q, k))
    q_rot, k_rot = rotate(q_rot, k_rot)
    return torch.cat((q_rot, q_pass), dim=-1), torch.cat((k_rot, k_pass), dim=-1)


def hf_autograd(q, k, positions, spec):
    """PyTorch, HF transformers rotate_half; its backward by torch.autograd"""
    cos, sin = hf_cos_sin(spec["rotary_dim"], spec["base"], positions)
    return partial(q, k, spec, lambda q_rot, k_rot: apply_rotary_pos_emb(q_rot, k_rot, cos, sin))


class FusedRope(torch.autograd.Function):
    """y = x * cos + rotate_half(x) * sin; its backward by hand, as a fused training kernel's."""

    @staticmethod
    def forward(ctx, x, cos, sin):
        ctx.save_for_backward(cos, sin)
        return x * cos + rotate_half(x) * sin

    @staticmethod
    def backward(ctx, dy):
        cos, sin = ctx.saved_tensors
        return dy * cos + rotate_half(dy) * (-sin), None, None  # R(m)^T = R(-m): the sine negated


class FusedRopeSinNotFlipped(FusedRope):
    @staticmethod
    def backward(ctx, dy):
        cos, sin = ctx.saved_tensors
        return dy * cos + rotate_half(dy) * sin, None, None  # BUG: the forward's formula again


def fused(q, k, positions, spec, function):
    cos, sin = hf_cos_sin(spec["rotary_dim"], spec["base"], positions)
    cos, sin = cos[:, None, :], sin[:, None, :]  # over the heads
    return partial(q, k, spec, lambda q_rot, k_rot: (function.apply(q_rot, cos, sin), function.apply(k_rot, cos, sin)))


def fused_function(q, k, positions, spec):
    """PyTorch, a torch.autograd.Function with the backward written by hand (the sine negated)"""
    return fused(q, k, positions, spec, FusedRope)


def fused_sin_not_flipped(q, k, positions, spec):
    """the same Function with the sine's sign kept in its backward"""
    return fused(q, k, positions, spec, FusedRopeSinNotFlipped)


def numpy_round_trip(q, k, positions, spec):
    """HF's rotation computed in numpy on detached copies: the right forward, no gradient"""
    d = spec["rotary_dim"]
    cos, sin = (t.numpy()[:, None, :] for t in hf_cos_sin(d, spec["base"], positions))
    out = []
    for x in (q, k):
        rotated = x.detach().numpy().copy()  # BUG: the graph ends here
        part = rotated[..., :d]
        half = np.concatenate((-part[..., d // 2 :], part[..., : d // 2]), axis=-1)
        rotated[..., :d] = part * cos + half * sin
        out.append(torch.from_numpy(rotated))
    return out[0], out[1]


# HF's form: half-split, float32 angles (float positions times float inv_freq).
for _f in (hf_autograd, fused_function, fused_sin_not_flipped, numpy_round_trip):
    _f.ropecheck = {"layouts": ["half_split"], "angles": "fp32", "autograd": True}
