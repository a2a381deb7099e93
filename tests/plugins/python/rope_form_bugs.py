# The call forms of plugins/examples/python/torch_rope_form.py with one real bug each, and calls
# that misbehave rather than compute wrongly: each must differ from the truth where its bug says,
# or be a failure that names it, never a crash of ropecheck (tests/plugins/python_rope_form_test.cc).
import ctypes
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "..", "plugins",
                                "examples", "python"))
import torch_rope_form as ref  # noqa: E402


def _vllm(x, positions, cos_sin_cache, spec):
    x.copy_(ref.forward_native(positions, x.float(), cos_sin_cache, spec))


def k_read_with_q_head_stride(q, k, positions, cos_sin_cache, norm, spec, form):
    # k's heads addressed with q's head stride (one stride variable for both, as a port of a
    # kernel written for a packed qkv of equal strides has): right only where the strides agree.
    _vllm(q, positions, cos_sin_cache, spec)
    if k is not None:
        kv, qv = form["k_view"], form["q_view"]
        wrong = torch.as_strided(form["buffer"], k.shape, (kv["token_stride"], qv["head_stride"], 1), kv["offset"])
        _vllm(wrong, positions, cos_sin_cache, spec)


def contiguous_copy_rotated(q, k, positions, cos_sin_cache, norm, spec, form):
    # .contiguous() to get a kernel-friendly layout, rotated in place there and never written back:
    # a flat view is its own contiguous tensor (right), a strided one is copied (the result lost).
    for x in (q, k):
        if x is not None:
            _vllm(x.contiguous(), positions, cos_sin_cache, spec)


def rotary_dim_ignored_with_norm(q, k, positions, cos_sin_cache, norm, spec, form):
    # Gemma's norm, then the whole head rotated: the fused path forgot partial rotary.
    whole = dict(spec, rotary_dim=spec["head_dim"])
    cos, sin = ref.hf_cos_sin(positions, whole)
    for x, weight in ((q, norm["q_weight"]), (k, norm["k_weight"])):
        if x is not None:
            x.copy_(ref.apply_rotary_pos_emb(ref.gemma3_rms_norm(x, weight, norm["eps"]), cos, sin, spec["head_dim"]))


def cos_and_sin_at_the_same_index(q, k, positions, cos_sin_cache, norm, spec, form):
    # sin read where cos is (cache[pos, i] for both): the half offset of the cache's sin lost.
    half = spec["rotary_dim"] // 2
    same = torch.cat((cos_sin_cache[:, :half], cos_sin_cache[:, :half]), dim=-1)
    for x in (q, k):
        if x is not None:
            _vllm(x, positions, same, spec)


def _no_eps_qwen3(hidden_states, weight, eps):
    input_dtype = hidden_states.dtype
    hidden_states = hidden_states.to(torch.float32)
    variance = hidden_states.pow(2).mean(-1, keepdim=True)
    return (weight * (hidden_states * torch.rsqrt(variance)).to(input_dtype)).to(input_dtype)


def eps_dropped(q, k, positions, cos_sin_cache, norm, spec, form):
    # rsqrt(variance) without + eps: the same wherever mean(x^2) >> eps, far off for a quiet head.
    ref.hf_qk_norm_rope(q, k, positions, norm, spec, _no_eps_qwen3)


def _plain_weight_gemma(x, weight, eps):
    output = x.float()
    return output * torch.rsqrt(output.pow(2).mean(-1, keepdim=True) + eps) * weight.float()


def one_plus_weight_as_plain(q, k, positions, cos_sin_cache, norm, spec, form):
    # Gemma's checkpoint weight (stored as w, applied as 1 + w) multiplied as Llama's is: x_hat w.
    ref.hf_qk_norm_rope(q, k, positions, norm, spec, _plain_weight_gemma)


def _rounded_gemma(x, weight, eps):
    output = x.float()
    output = (output * torch.rsqrt(output.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype).float()
    return (output * (1.0 + weight.float())).to(x.dtype)


def norm_in_storage_declared_fp32(q, k, positions, cos_sin_cache, norm, spec, form):
    # Declares the fused norm's fp32 precision but rounds to the model's dtype twice on the way
    # (an unfused chain): the same in fp32 storage, a bf16 rounding or two off in bf16.
    ref.hf_qk_norm_rope(q, k, positions, norm, spec, _rounded_gemma)


# --- calls that misbehave ---

def raises_on_bf16(q, k, positions, cos_sin_cache, norm, spec, form):
    if form["storage"] == "bf16":
        raise NotImplementedError("no bf16 in this port")
    ref.vllm_forward_native(q, k, positions, cos_sin_cache, norm, spec, form)


def returns_a_wrong_shape(q, k, positions, cos_sin_cache, norm, spec, form):
    return q[:, :1], k


def writes_the_cache(q, k, positions, cos_sin_cache, norm, spec, form):
    cos_sin_cache[0, 0] = 2.0
    ref.vllm_forward_native(q, k, positions, cos_sin_cache, norm, spec, form)


def writes_past_the_buffer(q, k, positions, cos_sin_cache, norm, spec, form):
    ref.vllm_forward_native(q, k, positions, cos_sin_cache, norm, spec, form)
    buffer = form["buffer"]  # one element past its end, by address (a view cannot reach it)
    ctypes.c_uint16.from_address(buffer.data_ptr() + buffer.numel() * buffer.element_size()).value = 1


_VLLM = {"rope_form": {"storage": ["fp32", "bf16", "fp16"], "angle_sources": "cos_sin_cache"},
         "tensors": "torch", "layouts": ["interleaved", "half_split"], "angles": "fp32"}
_GEMMA = {"rope_form": {"storage": ["fp32", "bf16"], "norm_weights": "one_plus", "norm_precision": "fp32",
                        "plain_calls": False},
          "tensors": "torch", "layouts": "half_split", "angles": "fp32"}
_QWEN3 = {"rope_form": {"storage": ["fp32", "bf16"], "norm_weights": "plain", "norm_precision": "storage",
                        "plain_calls": False},
          "tensors": "torch", "layouts": "half_split", "angles": "fp32"}
for _f in (k_read_with_q_head_stride, contiguous_copy_rotated, cos_and_sin_at_the_same_index, raises_on_bf16,
           returns_a_wrong_shape, writes_the_cache, writes_past_the_buffer):
    _f.ropecheck = _VLLM
for _f in (rotary_dim_ignored_with_norm, one_plus_weight_as_plain, norm_in_storage_declared_fp32):
    _f.ropecheck = _GEMMA
eps_dropped.ropecheck = _QWEN3


# --- malformed declarations ---

def declares_a_backward(q, k, positions, cos_sin_cache, norm, spec, form):
    pass


declares_a_backward.ropecheck = dict(_VLLM, autograd=True)


def declares_an_unknown_source(q, k, positions, cos_sin_cache, norm, spec, form):
    pass


declares_an_unknown_source.ropecheck = {"rope_form": {"angle_sources": ["table"]}}


def takes_the_rope_arguments(q, k, positions, spec):
    pass


takes_the_rope_arguments.ropecheck = {"rope_form": {}}
