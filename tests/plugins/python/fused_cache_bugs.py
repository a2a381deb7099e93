# The fused cache call of plugins/examples/python/torch_fused_cache.py with one real bug each, and
# fused calls that misbehave rather than compute wrongly: each must differ from the truth where its
# bug says, or be a failure that names it, never a crash of ropecheck
# (tests/plugins/python_fused_cache_test.cc).
import ctypes
import os
import signal
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "..", "plugins",
                                "examples", "python"))
import torch_fused_cache as ref  # noqa: E402


def _rotated(q, k, positions, spec):
    cos, sin = ref.compute_cos_sin(positions, spec, q.device)
    q[...] = ref.rotate(q, cos, sin, spec)
    return ref.rotate(k, cos, sin, spec)


def _write_rows(k_rot, v, k_cache, v_cache, cache, block_idx, block_offset, valid, quantize=ref.quantize_into):
    if cache["layout"] == "mla":
        rows = torch.cat((v[valid, 0], k_rot[valid, 0]), dim=-1)
        quantize(k_cache, (block_idx, block_offset), rows, cache["k_scale"], cache)
        return
    index = (block_idx, block_offset) if cache["layout"] == "nhd" else (block_idx, slice(None), block_offset)
    quantize(k_cache, index, k_rot[valid], cache["k_scale"], cache)
    quantize(v_cache, index, v[valid], cache["v_scale"], cache)


def slot_minus_one_as_index(q, k, v, positions, slots, k_cache, v_cache, spec, cache):
    # No padding check: slot -1 is block -1, offset block_size - 1 (Python's floor), the cache's
    # last slot, which the padding token's row overwrites (vLLM PR #43869).
    k_rot = _rotated(q, k, positions, spec)
    every = torch.ones_like(slots, dtype=torch.bool)
    _write_rows(k_rot, v, k_cache, v_cache, cache, torch.div(slots, cache["block_size"], rounding_mode="floor"),
                slots % cache["block_size"], every)


def block_and_offset_swapped(q, k, v, positions, slots, k_cache, v_cache, spec, cache):
    k_rot = _rotated(q, k, positions, spec)
    valid, block_idx, block_offset = ref.block_and_offset(slots, cache)
    _write_rows(k_rot, v, k_cache, v_cache, cache, block_offset, block_idx, valid)


def _unsaturated(cache_tensor, index, rows, scale, cache):
    # ref.quantize_into without the clamp: the eager cast of pytorch/ao #1912.
    scale = torch.tensor(scale, dtype=torch.float32).reshape(-1, 1)
    stored = rows * scale if cache["scale_direction"] == "multiply" else rows / scale
    fp8 = ref.FP8_DTYPE[cache["storage"]]
    bits = stored.to(fp8).view(torch.uint8) if fp8 is not None else ref.fp8_bits(stored, cache["storage"])
    cache_tensor.view(torch.uint8)[index] = bits


def no_fp8_saturation(q, k, v, positions, slots, k_cache, v_cache, spec, cache):
    k_rot = _rotated(q, k, positions, spec)
    valid, block_idx, block_offset = ref.block_and_offset(slots, cache)
    _write_rows(k_rot, v, k_cache, v_cache, cache, block_idx, block_offset, valid,
                _unsaturated if cache["storage"] in ref.FP8_MAX else ref.quantize_into)


def scale_direction_flipped(q, k, v, positions, slots, k_cache, v_cache, spec, cache):
    # Divides where the cache says multiply and multiplies where it says divide (vLLM divides,
    # FlashInfer and TensorRT-LLM multiply: a port between them that keeps its own).
    flipped = dict(cache, scale_direction="divide" if cache["scale_direction"] == "multiply" else "multiply")
    ref.vllm_fused(q, k, v, positions, slots, k_cache, v_cache, spec, flipped)


def hnd_stride_on_nhd(q, k, v, positions, slots, k_cache, v_cache, spec, cache):
    # An NHD cache [blocks, block_size, kv_heads, head_dim] indexed as HND's
    # [blocks, kv_heads, block_size, head_dim]: the same memory viewed with the heads outside.
    k_rot = _rotated(q, k, positions, spec)
    valid, block_idx, block_offset = ref.block_and_offset(slots, cache)
    if cache["layout"] != "nhd":
        return _write_rows(k_rot, v, k_cache, v_cache, cache, block_idx, block_offset, valid)
    as_hnd = lambda c: c.view(c.shape[0], c.shape[2], c.shape[1], c.shape[3])  # noqa: E731
    _write_rows(k_rot, v, as_hnd(k_cache), as_hnd(v_cache), dict(cache, layout="hnd"), block_idx, block_offset, valid)


def v_unrotated_in_k(q, k, v, positions, slots, k_cache, v_cache, spec, cache):
    # The two arguments mixed up: v, as it came, written into k's place (under mla, k_pe unrotated).
    _rotated(q, k, positions, spec)
    valid, block_idx, block_offset = ref.block_and_offset(slots, cache)
    _write_rows(k if cache["layout"] == "mla" else v, v, k_cache, v_cache, cache, block_idx, block_offset, valid)


def padding_rule_violated(q, k, v, positions, slots, k_cache, v_cache, spec, cache):
    # Declares rotate_q_only (vLLM's rule) but leaves a padding token's q as it came.
    ref.vllm_fused_skip_padding(q, k, v, positions, slots, k_cache, v_cache, spec, cache)


def raises_on_fp8(q, k, v, positions, slots, k_cache, v_cache, spec, cache):
    if cache["storage"].startswith("fp8"):
        raise NotImplementedError("no FP8 cache in this port (%s)" % cache["storage"])
    ref.vllm_fused(q, k, v, positions, slots, k_cache, v_cache, spec, cache)


def returns_a_wrong_shape(q, k, v, positions, slots, k_cache, v_cache, spec, cache):
    ref.vllm_fused(q, k, v, positions, slots, k_cache, v_cache, spec, cache)
    return q[:, :1], k_cache, v_cache


def returns_a_wrong_dtype(q, k, v, positions, slots, k_cache, v_cache, spec, cache):
    ref.vllm_fused(q, k, v, positions, slots, k_cache, v_cache, spec, cache)
    return q, k_cache.double(), None if v_cache is None else v_cache.double()


def hangs_on_padding(q, k, v, positions, slots, k_cache, v_cache, spec, cache):
    if bool((slots < 0).any()):
        time.sleep(1000)
    ref.vllm_fused(q, k, v, positions, slots, k_cache, v_cache, spec, cache)


def crashes_on_padding(q, k, v, positions, slots, k_cache, v_cache, spec, cache):
    if bool((slots < 0).any()):
        os.kill(os.getpid(), signal.SIGSEGV)
    ref.vllm_fused(q, k, v, positions, slots, k_cache, v_cache, spec, cache)


def writes_slots_by_address(q, k, v, positions, slots, k_cache, v_cache, spec, cache):
    ctypes.c_int64.from_address(slots.ctypes.data).value += 1  # around numpy's read-only flag


def writes_past_the_v_cache(q, k, v, positions, slots, k_cache, v_cache, spec, cache):
    ref.vllm_fused(q, k, v, positions, slots, k_cache, v_cache, spec, cache)
    ctypes.c_float.from_address(v_cache.data_ptr() + v_cache.numel() * v_cache.element_size()).value = 1.0


def on_a_missing_device(q, k, v, positions, slots, k_cache, v_cache, spec, cache):
    ref.vllm_fused(q, k, v, positions, slots, k_cache, v_cache, spec, cache)


def on_no_such_device(q, k, v, positions, slots, k_cache, v_cache, spec, cache):
    pass


def declares_a_backward(q, k, v, positions, slots, k_cache, v_cache, spec, cache):
    pass


def declares_an_unknown_layout(q, k, v, positions, slots, k_cache, v_cache, spec, cache):
    pass


def takes_the_rope_arguments(q, k, positions, spec):
    pass


for _f in (slot_minus_one_as_index, block_and_offset_swapped, no_fp8_saturation, scale_direction_flipped,
           hnd_stride_on_nhd, v_unrotated_in_k, padding_rule_violated, raises_on_fp8, returns_a_wrong_shape, returns_a_wrong_dtype, hangs_on_padding, crashes_on_padding,
           writes_past_the_v_cache):
    _f.ropecheck = ref.vllm_fused.ropecheck
on_a_missing_device.ropecheck = dict(ref.vllm_fused.ropecheck, device="cuda")
on_no_such_device.ropecheck = dict(ref.vllm_fused.ropecheck, device="nodevice")
declares_a_backward.ropecheck = dict(ref.vllm_fused.ropecheck, autograd=True)
declares_an_unknown_layout.ropecheck = dict(ref.vllm_fused.ropecheck, fused_cache={"layouts": ["nhd", "paged"]})
takes_the_rope_arguments.ropecheck = ref.vllm_fused.ropecheck
# numpy views: torch's slots are a copy, which a write by address does not reach.
writes_slots_by_address.ropecheck = {key: value for key, value in ref.vllm_fused.ropecheck.items()
                                     if key not in ("tensors", "device")}
