# RoPE in the engines' own call forms, with QK-norm before it, as vLLM's and HF transformers'
# PyTorch code computes it, on the contract of docs/porting.md ("Python: the call forms"): q and
# k are torch.as_strided views into one buffer (flat, slices of a packed qkv, MLA's q_pe parts),
# written in place through the views (k may be None); nothing else in the buffer is touched.
# In bf16 and fp16 the values are widened to float32 for the rotation and the result is rounded
# once into the buffer, what the form's bound holds a kernel to (the libraries' eager ops in the
# model's dtype round cos, sin and every product again).
#   ropecheck verify --python plugins/examples/python/torch_rope_form.py:vllm_forward_native
#   ropecheck verify --python plugins/examples/python/torch_rope_form.py:hf_qwen3_qk_norm
#   ropecheck verify --python plugins/examples/python/torch_rope_form.py:hf_gemma3_qk_norm
import torch

torch.set_num_threads(1)


# --- vLLM: vllm/model_executor/layers/rotary_embedding (RotaryEmbedding) ---

def vllm_cos_sin_cache(positions, spec):
    """_compute_cos_sin_cache for the call's positions (a row per token, not max_position rows:
    spec-angle calls may reach -2^24 or 2^24): float32 inv_freq, freqs = t x inv_freq,
    cat(cos, sin). Row j belongs to token j, so the index_select below takes arange(tokens)."""
    rotary_dim = spec["rotary_dim"]
    inv_freq = 1.0 / (spec["base"] ** (torch.arange(0, rotary_dim, 2, dtype=torch.float) / rotary_dim))
    freqs = torch.einsum("i,j -> ij", positions.cpu().float(), inv_freq)
    return torch.cat((freqs.cos(), freqs.sin()), dim=-1).to(positions.device)


def apply_rotary_emb_torch(x, cos, sin, is_neox_style):
    cos = cos.unsqueeze(-2).to(x.dtype)
    sin = sin.unsqueeze(-2).to(x.dtype)
    if is_neox_style:
        x1, x2 = torch.chunk(x, 2, dim=-1)
    else:
        x1 = x[..., ::2]
        x2 = x[..., 1::2]
    o1 = x1 * cos - x2 * sin
    o2 = x2 * cos + x1 * sin
    if is_neox_style:
        return torch.cat((o1, o2), dim=-1)
    return torch.stack((o1, o2), dim=-1).flatten(-2)


def forward_native(positions, x, cos_sin_cache, spec):
    """x [tokens, heads, head_size] float32: cos_sin = cache.index_select(0, positions), chunked
    into cos and sin; the first rotary_dim features rotated (NeoX or GPT-J pairs), the rest passed."""
    rotary_dim = spec["rotary_dim"]
    cos_sin = cos_sin_cache.index_select(0, positions)
    cos, sin = cos_sin.chunk(2, dim=-1)
    x_rot, x_pass = x[..., :rotary_dim], x[..., rotary_dim:]
    x_rot = apply_rotary_emb_torch(x_rot, cos, sin, spec["layout"] == "half_split")
    return torch.cat((x_rot, x_pass), dim=-1)


def vllm_forward_native(q, k, positions, cos_sin_cache, norm, spec, form):
    """PyTorch, vLLM's RotaryEmbedding.forward_native: cos_sin_cache indexed by position, in place through strided q and k"""
    if cos_sin_cache is None:  # angles from the spec: the module's own table, built as vLLM builds it
        cos_sin_cache, positions = vllm_cos_sin_cache(positions, spec), torch.arange(q.shape[0], device=q.device)
    for x in (q, k):
        if x is not None:
            x.copy_(forward_native(positions, x.float(), cos_sin_cache, spec))


# --- HF transformers: Qwen3 (models/qwen3/modeling_qwen3.py) and Gemma 3 (models/gemma3) ---

def hf_cos_sin(positions, spec):
    """Qwen3RotaryEmbedding.forward: float32 inv_freq times float(position), emb = cat(freqs, freqs)."""
    rotary_dim = spec["rotary_dim"]
    inv_freq = 1.0 / (spec["base"] ** (torch.arange(0, rotary_dim, 2, dtype=torch.int64).float() / rotary_dim))
    freqs = positions.float()[:, None] * inv_freq[None, :]  # the matmul's inner dimension is 1
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(x, cos, sin, rotary_dim):
    """q_embed = (q * cos) + (rotate_half(q) * sin) over the heads (unsqueeze_dim 1 of [tokens, heads,
    d]); a partial rotary model (Phi, NeoX) slices [..., :rotary_dim] and concatenates the rest."""
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    rot, passed = x[..., :rotary_dim], x[..., rotary_dim:]
    return torch.cat(((rot * cos) + (rotate_half(rot) * sin), passed), dim=-1)


def qwen3_rms_norm(hidden_states, weight, eps):
    """Qwen3RMSNorm.forward: the variance in float32, rsqrt(variance + eps), then `weight *
    hidden_states.to(input_dtype)` in the model's dtype (the weight as given: a checkpoint's bf16
    weight is exact in float32, so the product rounds once, to the model's dtype)."""
    input_dtype = hidden_states.dtype
    hidden_states = hidden_states.to(torch.float32)
    variance = hidden_states.pow(2).mean(-1, keepdim=True)
    hidden_states = hidden_states * torch.rsqrt(variance + eps)
    return (weight * hidden_states.to(input_dtype)).to(input_dtype)


def gemma3_rms_norm(x, weight, eps):
    """Gemma3RMSNorm: _norm(x.float()) * (1.0 + weight.float()), float32 throughout; kept in float32
    into the rotation (the fused form) rather than .type_as(x) first."""
    output = x.float()
    output = output * torch.rsqrt(output.pow(2).mean(-1, keepdim=True) + eps)
    return output * (1.0 + weight.float())


def hf_qk_norm_rope(q, k, positions, norm, spec, rms_norm):
    """q_norm and k_norm over each head, then apply_rotary_pos_emb, written back through the views."""
    cos, sin = hf_cos_sin(positions, spec)
    for x, weight in ((q, None if norm is None else norm["q_weight"]), (k, None if norm is None else norm["k_weight"])):
        if x is None:
            continue
        states = x if norm is None else rms_norm(x, weight, norm["eps"])
        x.copy_(apply_rotary_pos_emb(states.float(), cos, sin, spec["rotary_dim"]))


def hf_qwen3_qk_norm(q, k, positions, cos_sin_cache, norm, spec, form):
    """PyTorch, HF Qwen3: Qwen3RMSNorm on q and k (in the model's dtype), then apply_rotary_pos_emb"""
    hf_qk_norm_rope(q, k, positions, norm, spec, qwen3_rms_norm)


def hf_gemma3_qk_norm(q, k, positions, cos_sin_cache, norm, spec, form):
    """PyTorch, HF Gemma 3: Gemma3RMSNorm (1 + w, float32) on q and k, then apply_rotary_pos_emb"""
    hf_qk_norm_rope(q, k, positions, norm, spec, gemma3_rms_norm)


# vLLM: both pair layouts, both angle sources, every storage, any view; no norm.
vllm_forward_native.ropecheck = {
    "rope_form": {"storage": ["fp32", "bf16", "fp16"], "angle_sources": ["cos_sin_cache", "spec"]},
    "tensors": "torch", "device": "cpu", "layouts": ["interleaved", "half_split"], "angles": "fp32"}
# HF: rotate_half only, its own angles; Qwen3's norm in the model's dtype, Gemma's in float32.
hf_qwen3_qk_norm.ropecheck = {
    "rope_form": {"storage": ["fp32", "bf16"], "norm_weights": "plain", "norm_precision": "storage"},
    "tensors": "torch", "device": "cpu", "layouts": "half_split", "angles": "fp32"}
hf_gemma3_qk_norm.ropecheck = {
    "rope_form": {"storage": ["fp32", "bf16"], "norm_weights": "one_plus", "norm_precision": "fp32"},
    "tensors": "torch", "device": "cpu", "layouts": "half_split", "angles": "fp32"}
