# Multi-axis RoPE in numpy, ported line by line from HF transformers' vision-language models:
#   mrope   Qwen2-VL's apply_multimodal_rotary_pos_emb: cos and sin per axis (t, h, w), cut by
#           cos.split(mrope_section * 2) (the cos of d features is two halves of d/2 frequencies:
#           the sections run over each half), chunk i taking axis i % 3;
#   imrope  Qwen3-VL's apply_interleaved_mrope: the frequencies of axis t, with every third one
#           from offset 1 (h) and 2 (w) taken from those axes, up to 3 * mrope_section[axis];
#   vision  Qwen2-VL's vision tower: VisionRotaryEmbedding(head_dim / 2) indexed by the patch's
#           row and column, so each half of the frequencies restarts: theta_j = base^(-2j/(d/2));
# and 1D RoPE (one axis) as HF's apply_rotary_pos_emb. HF's form is half-split (rotate_half); the
# interleaved layout goes through the same code behind the permutation HF's conversion scripts
# apply to the q/k weights. Angles are formed in float64.
#   ropecheck verify --python plugins/examples/python/mrope_rope.py:apply
#
# The other functions are the same port with one real bug each: `ropecheck verify` must exit 1
# on every one of them (tests/plugins/python_test.cc).
import numpy as np


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return np.concatenate((-x2, x1), axis=-1)


def split(x, sizes):
    # torch's x.split(sizes, dim=-1); numpy's split takes cut points, and unlike torch it does not
    # check that the sizes cover x: the last chunk takes whatever is left.
    return np.split(x, np.cumsum(sizes)[:-1], axis=-1)


def inv_freq(base, d):
    return 1.0 / (base ** (np.arange(0, d, 2, dtype=np.float64) / d))


def text_freqs(positions, base, d):
    """[axes, tokens, d/2]: HF's freqs = inv_freq @ position_ids, per axis (Qwen2VLRotaryEmbedding)."""
    per_axis = positions.T if positions.ndim == 2 else positions[None, :]
    return per_axis.astype(np.float64)[:, :, None] * inv_freq(base, d)[None, None, :]


def multimodal_cos_sin(positions, spec, sections, doubled=True, swap_hw=False):
    """Qwen2-VL: apply_multimodal_rotary_pos_emb's cos and sin, [tokens, d]."""
    if swap_hw:
        positions = positions[:, [0, 2, 1]]
    freqs = text_freqs(positions, spec["base"], spec["rotary_dim"])
    emb = np.concatenate((freqs, freqs), axis=-1)  # [3, tokens, d]
    cos, sin = np.cos(emb), np.sin(emb)
    mrope_section = list(sections) * 2 if doubled else list(sections)
    cos = np.concatenate([m[i % 3] for i, m in enumerate(split(cos, mrope_section))], axis=-1)
    sin = np.concatenate([m[i % 3] for i, m in enumerate(split(sin, mrope_section))], axis=-1)
    return cos, sin


def boundary_cos_sin(positions, spec, sections):
    """MRoPE as a port without split writes it: each pair's axis from the section ends, with the
    off-by-one of comparing i <= end (searchsorted's side "left") where HF's split has i < end."""
    i = np.arange(spec["rotary_dim"] // 2)
    axis = np.searchsorted(np.cumsum(sections), i, side="left")  # right: pair `end` opens the next axis
    freqs = text_freqs(positions, spec["base"], spec["rotary_dim"])[axis, :, i].T  # [tokens, d/2]
    emb = np.concatenate((freqs, freqs), axis=-1)
    return np.cos(emb), np.sin(emb)


def apply_interleaved_mrope(freqs, mrope_section, offsets=(1, 2)):
    """Qwen3-VL: [3, tokens, d/2] -> [tokens, d/2], the frequencies laid out THWTHW...TT."""
    freqs_t = freqs[0].copy()  # just overwrite the first dimension T
    for dim, offset in enumerate(offsets, start=1):  # H, W
        length = mrope_section[dim] * 3
        idx = slice(offset, length, 3)
        freqs_t[..., idx] = freqs[dim, ..., idx]
    return freqs_t


def interleaved_cos_sin(positions, spec, offsets=(1, 2)):
    freqs = apply_interleaved_mrope(text_freqs(positions, spec["base"], spec["rotary_dim"]),
                                    spec["mrope_section"], offsets)
    emb = np.concatenate((freqs, freqs), axis=-1)
    return np.cos(emb), np.sin(emb)


def vision_cos_sin(positions, spec):
    """Qwen2-VL's vision tower: rotary_pos_emb_full[pos_ids].flatten(1), then cat(emb, emb).

    HF's two halves are equal (head_dim / 4 pairs each); ropecheck may draw them unequal, so each
    axis takes the first mrope_section[axis] frequencies of the same table.
    """
    d = spec["rotary_dim"]
    rows, columns = spec["mrope_section"]
    table = 1.0 / (spec["base"] ** (np.arange(0, 2 * max(rows, columns, 1), 2, dtype=np.float64) / (d // 2)))
    h = positions[:, 0].astype(np.float64)[:, None] * table[None, :rows]
    w = positions[:, 1].astype(np.float64)[:, None] * table[None, :columns]
    emb = np.concatenate((h, w, h, w), axis=-1)  # [tokens, d]: (h, w) for each half
    return np.cos(emb), np.sin(emb)


def rotary_cos_sin(positions, spec):
    freqs = text_freqs(positions, spec["base"], spec["rotary_dim"])[0]
    emb = np.concatenate((freqs, freqs), axis=-1)
    return np.cos(emb), np.sin(emb)


def apply_rotary(q, k, cos, sin, layout, d):
    """HF's q * cos + rotate_half(q) * sin on the first d features, in place."""
    # HF's rotate_half pairs (i, i + d/2); interleaved pairs (2i, 2i+1) are the same pairs after
    # this permutation of the features (the one HF applies to converted q/k weights).
    order = np.arange(d) if layout == "half_split" else np.concatenate((np.arange(0, d, 2), np.arange(1, d, 2)))
    cos, sin = cos[:, None, :], sin[:, None, :]  # broadcast over heads
    for x in (q, k):  # k may have no heads
        part = x[..., order].astype(np.float64)
        x[..., order] = part * cos + rotate_half(part) * sin


def port(q, k, positions, spec, bug=None):
    mode = spec.get("axes", "none")
    sections = spec.get("mrope_section")
    if mode == "mrope" and bug == "sections_off_by_one":
        cos, sin = boundary_cos_sin(positions, spec, sections)
    elif mode == "mrope":
        cos, sin = multimodal_cos_sin(positions, spec, sections, doubled=bug != "section_not_doubled",
                                      swap_hw=bug == "h_w_swapped")
    elif mode == "imrope":
        offsets = (0, 1) if bug == "interleave_offset_wrong" else (1, 2)
        if bug == "h_w_swapped":
            positions = positions[:, [0, 2, 1]]
        cos, sin = interleaved_cos_sin(positions, spec, offsets)
    elif mode == "vision":
        if bug == "h_w_swapped":
            positions = positions[:, [1, 0]]
        cos, sin = vision_cos_sin(positions, spec)
    else:
        cos, sin = rotary_cos_sin(positions, spec)
    apply_rotary(q, k, cos, sin, spec["layout"], spec["rotary_dim"])


def apply(q, k, positions, spec):
    """numpy port of HF's Qwen2-VL MRoPE, Qwen3-VL interleaved MRoPE and the 2D vision RoPE"""
    port(q, k, positions, spec)


def sections_off_by_one(q, k, positions, spec):
    """MRoPE with the pair at each section's end given to the axis before it (i <= end for i < end)"""
    port(q, k, positions, spec, "sections_off_by_one")


def h_w_swapped(q, k, positions, spec):
    """the height and width positions exchanged (mrope, imrope; row and column for vision)"""
    port(q, k, positions, spec, "h_w_swapped")


def interleave_offset_wrong(q, k, positions, spec):
    """Qwen3-VL's interleaving from offsets 0 and 1 instead of 1 and 2"""
    port(q, k, positions, spec, "interleave_offset_wrong")


def section_not_doubled(q, k, positions, spec):
    """cos.split(mrope_section) without the * 2: the second half of the features all on w"""
    port(q, k, positions, spec, "section_not_doubled")


for _f in (apply, sections_off_by_one, h_w_swapped, interleave_offset_wrong, section_not_doubled):
    _f.ropecheck = {"layouts": ["interleaved", "half_split"], "axes": ["mrope", "imrope", "vision"], "angles": "fp64"}
