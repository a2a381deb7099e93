# RoPE as PyTorch users write it, on the contract of docs/porting.md ("Python"): Hugging Face
# transformers' rotate_half form (LlamaRotaryEmbedding + apply_rotary_pos_emb, partial rotary as
# Phi/GPT-NeoX slice it) and Meta LLaMA's complex form (precompute_freqs_cis + apply_rotary_emb),
# each line the one those projects run, on [tokens, heads, head_dim] tensors (their batch
# dimension dropped). One thread, as the C++ peers (plugins/peers/torch). The *_cuda functions
# move the tensors to the GPU and back, as a model on a GPU would hold them; the constants each
# project forms when the model is built (HF's inv_freq buffer, Meta's freqs_cis) are formed on the
# CPU and moved to the GPU, as those projects do for a model built on the CPU and moved there. Formed
# on the GPU instead, with CUDA's powf (less accurate than the 1 ulp that core/tolerance.h allows
# powf), the angles fall outside the fp32-angle bound: boundary_shapes failed at position 2^24
# (1.06 of the bound; head_dim 122, base 1e7; --cases 1000 --seed 2).
#   ropecheck verify --python plugins/examples/python/torch_rope.py:hf_rotate_half
#   ropecheck verify --python plugins/examples/python/torch_rope.py:meta_complex
import torch

torch.set_num_threads(1)


# --- Hugging Face transformers (models/llama/modeling_llama.py, models/phi/modeling_phi.py) ---

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


def hf_cos_sin(dim, base, position_ids, device):
    # LlamaRotaryEmbedding.__init__ forms inv_freq where the model is built (the CPU) and keeps it as
    # a buffer; its forward moves it to the input's device (.to(x.device)).
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    inv_freq_expanded = inv_freq[None, :, None].float().expand(1, -1, 1).to(device)
    position_ids_expanded = position_ids[None, None, :].float()
    freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos()[0], emb.sin()[0]  # [tokens, dim]


def _hf(q, k, positions, spec, device):
    rotary_dim = spec["rotary_dim"]
    query = torch.from_numpy(q).to(device)
    key = torch.from_numpy(k).to(device)
    # torch.tensor copies the positions: they are read-only, which from_numpy warns about.
    cos, sin = hf_cos_sin(rotary_dim, spec["base"], torch.tensor(positions, device=device), device)
    # Phi: query_rot, query_pass = query[..., :rotary_dim], query[..., rotary_dim:]
    query_rot, query_pass = query[..., :rotary_dim], query[..., rotary_dim:]
    key_rot, key_pass = key[..., :rotary_dim], key[..., rotary_dim:]
    query_rot, key_rot = apply_rotary_pos_emb(query_rot, key_rot, cos, sin)
    query = torch.cat((query_rot, query_pass), dim=-1)
    key = torch.cat((key_rot, key_pass), dim=-1)
    return query.cpu(), key.cpu()  # new tensors: ropecheck copies them into q and k


def hf_rotate_half(q, k, positions, spec):
    """PyTorch, HF transformers rotate_half + LlamaRotaryEmbedding (fp32 angles, half-split), CPU"""
    return _hf(q, k, positions, spec, "cpu")


def hf_rotate_half_cuda(q, k, positions, spec):
    """PyTorch, HF transformers rotate_half on the GPU (tensors moved there and back)"""
    return _hf(q, k, positions, spec, "cuda")


# --- Meta LLaMA (llama/model.py) ---

def precompute_freqs_cis(dim, t, theta):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2, device=t.device)[: (dim // 2)].float() / dim))
    freqs = torch.outer(t.float(), freqs).float()  # Meta: t = torch.arange(end); here the positions
    return torch.polar(torch.ones_like(freqs), freqs)  # complex64


def reshape_for_broadcast(freqs_cis, x):
    ndim = x.ndim
    assert 0 <= 1 < ndim
    assert freqs_cis.shape == (x.shape[0], x.shape[-1])
    shape = [d if i == 0 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(*shape)


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(2)  # Meta: flatten(3), with a batch dim
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(2)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def _meta(q, k, positions, spec, device):
    xq, xk = torch.from_numpy(q).to(device), torch.from_numpy(k).to(device)
    # Transformer.__init__ precomputes freqs_cis on the CPU; forward moves it: self.freqs_cis.to(h.device).
    freqs_cis = precompute_freqs_cis(spec["head_dim"], torch.tensor(positions), spec["base"]).to(device)
    if k.shape[1] == 0:  # q alone (the contract's kv_heads 0): Meta's reshape cannot infer -1 on nothing
        xq_out, _ = apply_rotary_emb(xq, xq, freqs_cis)
        return xq_out.cpu(), k
    xq_out, xk_out = apply_rotary_emb(xq, xk, freqs_cis)
    return xq_out.cpu(), xk_out.cpu()


def meta_complex(q, k, positions, spec):
    """PyTorch, Meta LLaMA precompute_freqs_cis + apply_rotary_emb (fp32 angles, interleaved), CPU"""
    return _meta(q, k, positions, spec, "cpu")


def meta_complex_cuda(q, k, positions, spec):
    """PyTorch, Meta LLaMA apply_rotary_emb on the GPU (tensors moved there and back)"""
    return _meta(q, k, positions, spec, "cuda")


# What each form computes: HF half-split only, Meta interleaved on the whole head; both form the
# angles in float32 (float positions times float inv_freq).
hf_rotate_half.ropecheck = {"layouts": ["half_split"], "angles": "fp32"}
hf_rotate_half_cuda.ropecheck = hf_rotate_half.ropecheck
meta_complex.ropecheck = {"layouts": ["interleaved"], "angles": "fp32", "partial_rotary": False}
meta_complex_cuda.ropecheck = meta_complex.ropecheck
