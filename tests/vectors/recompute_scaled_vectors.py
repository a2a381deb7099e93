#!/usr/bin/env python3
"""The frequency-scaled golden vectors recomputed apart from ropecheck's C++ oracle.

Runs `ropecheck vectors`, then for every RoPE case with frequency scaling recomputes, from the
manifest and the .npy files alone, in mpmath with 128-bit significands:
  - theta_i twice: from the case's spec.scaling (ropecheck's parameters) and from its
    hf_transformers config fields and positions.npy, the way transformers' current rope functions
    read them (sequence length = max(position_ids) + 1, YaRN's factor = max_position_embeddings /
    original_max_position_embeddings, its attention factor from DeepSeek's mscale and
    mscale_all_dim when both are set, LongRoPE's list by length): the two must agree;
  - the attention factor both ways, and against the manifest's;
  - theta.npy, q_expected.npy and k_expected.npy, each within the error of the oracle that wrote
    them (below).
With --self-test it recomputes every case once more under the other reading of its kind (vLLM's
dynamic length, transformers' earlier YaRN length, the other LongRoPE list, no attention factor,
YaRN's default attention factor for DeepSeek's mscale ratio, ...) and requires each to disagree with the vectors: the comparison can tell the conventions apart.

The oracle's error (impls/oracle/oracle_f64.cc: long double, u = 2^-64, libm within 2u):
  theta_i = exp(-(2i/d) ln base') [/ factor, / ext_i, * blend multiplier]: the exponent's
    rounding is amplified by |ln theta_i| (<= 6u |ln theta_i| with the NTK base's logarithms), the
    exp and the scaling ops add <= 8u; a blend multiplier M >= 1/factor carries an absolute error
    of a few u (YaRN's ramp, <= 48u with untruncated correction dims) or of hf/(hf-lf) times the
    frequency's own (Llama 3's smooth), relative to M that is times factor:
      rho_i = u (6 |ln theta_i| + 8 + blend_i)
  y = a (x_a cos(m theta_i) - x_b sin(m theta_i)): the angle carries |m theta_i| (rho_i + u),
    cosl/sinl, a and the products <= 16u of a |p|, and the result is rounded once to double:
      |expected - y| <= 2^-53 |y| + a |p| u (|m theta_i| (rho_i/u + 1) + 16)
  At |m theta| ~ 2^17 and factor 40 that is about 2^-36 a |p|: 2^13 times finer than fp32's eps,
  and a wrong convention moves theta_i by 1e-4 or more.

Usage: recompute_scaled_vectors.py [--self-test] ROPECHECK WORKDIR      (exit 0 ok, 1 not)
Needs python3-numpy and python3-mpmath (scripts/install-deps.sh).
"""
import json
import math
import pathlib
import shutil
import subprocess
import sys

import mpmath
import numpy as np

mpmath.mp.prec = 128
mpf = mpmath.mpf
U = mpf(2) ** -64     # the oracle's long double unit roundoff
HALF_ULP = mpf(2) ** -53  # rounding to float64
KINDS = ("linear", "ntk", "dynamic_ntk", "yarn", "llama3", "longrope")


# --- theta_i and the attention factor from normalized parameters --------------------------------

def table(p):
    """theta_i (mpf) and the attention factor a for normalized parameters p (ropecheck's meaning)."""
    d, base, kind = p["d"], mpf(p["base"]), p["kind"]
    f = mpf(p.get("factor", 1))
    if kind == "ntk":
        base = base * f ** (mpf(d) / (d - 2))
    if kind == "dynamic_ntk" and p["sequence_length"] > p["original_max_position"]:
        grown = f * p["sequence_length"] / mpf(p["original_max_position"]) - (f - 1)
        base = base * grown ** (mpf(d) / (d - 2))
    theta = [base ** (-mpf(2 * i) / d) for i in range(d // 2)]
    if kind == "linear":
        theta = [t / f for t in theta]
    elif kind == "yarn":
        theta = yarn(theta, p, f, mpf(p["base"]))
    elif kind == "llama3":
        theta = llama3(theta, p, f)
    elif kind == "longrope":
        ext = p["long_factor"] if p["sequence_length"] > p["original_max_position"] else p["short_factor"]
        theta = [t / mpf(e) for t, e in zip(theta, ext)]
    return theta, attention(p)


def yarn(theta, p, f, base):
    """transformers' find_correction_range and linear_ramp_factor, over pair index."""
    d, L = p["d"], mpf(p["original_max_position"])
    dim = lambda rotations: d * mpmath.log(L / (rotations * 2 * mpmath.pi)) / (2 * mpmath.log(base))
    low, high = dim(mpf(p["beta_fast"])), dim(mpf(p["beta_slow"]))
    if p["truncate"]:
        low, high = mpmath.floor(low), mpmath.ceil(high)
    low, high = max(low, 0), min(high, d - 1)
    if low == high:
        high += mpf("0.001")
    ramp = [min(max((i - low) / (high - low), 0), 1) for i in range(len(theta))]
    return [t / f * r + t * (1 - r) for t, r in zip(theta, ramp)]


def llama3(theta, p, f):
    """transformers' _compute_llama3_parameters, in wavelengths."""
    L, lf, hf = mpf(p["original_max_position"]), mpf(p["low_freq_factor"]), mpf(p["high_freq_factor"])
    out = []
    for t in theta:
        wavelen = 2 * mpmath.pi / t
        if wavelen < L / hf:
            out.append(t)
        elif wavelen > L / lf:
            out.append(t / f)
        else:
            smooth = (L / wavelen - lf) / (hf - lf)
            out.append((1 - smooth) * t / f + smooth * t)
    return out


def get_mscale(f, m):
    """YaRN's 0.1 m ln(f) + 1 (transformers' get_mscale, f > 1)."""
    return mpf("0.1") * m * mpmath.log(f) + 1


def attention(p):
    if p.get("attention_factor") is not None:
        return mpf(p["attention_factor"])
    f = mpf(p.get("factor", 1))
    if p["kind"] == "yarn" and f > 1:
        mscale, mscale_all_dim = p.get("mscale"), p.get("mscale_all_dim")
        if mscale and mscale_all_dim:  # DeepSeek's keys, both truthy as transformers tests them
            return get_mscale(f, mpf(mscale)) / get_mscale(f, mpf(mscale_all_dim))
        return get_mscale(f, 1)
    if p["kind"] == "longrope" and f > 1:
        return mpmath.sqrt(1 + mpmath.log(f) / mpmath.log(p["original_max_position"]))
    return mpf(1)


# --- the two readings -----------------------------------------------------------------------------

def from_spec(spec):
    """ropecheck's parameters as the manifest states them (spec.scaling)."""
    p = dict(spec["scaling"])
    p.update(d=spec["rotary_dim"], base=spec["base"])
    return p


def from_hf(hf, positions):
    """The hf_transformers fields, read as transformers' current rope functions read them."""
    d = int(hf["head_dim"] * hf.get("partial_rotary_factor", 1.0))
    rs = hf["rope_scaling"]
    seq_len = int(max(positions)) + 1  # max(position_ids) + 1
    p = {"d": d, "base": hf["rope_theta"], "kind": "none"}
    if rs is None:  # static NTK: the stretched base is rope_theta itself
        return p
    kind = rs["rope_type"]
    p["attention_factor"] = rs.get("attention_factor")
    if kind == "linear":
        p.update(kind="linear", factor=rs["factor"])
    elif kind == "dynamic":
        # transformers reads config.max_position_embeddings as the original length here.
        p.update(kind="dynamic_ntk", factor=rs["factor"], original_max_position=hf["max_position_embeddings"],
                 sequence_length=max(seq_len, hf["max_position_embeddings"]))
    elif kind == "yarn":
        original = rs.get("original_max_position_embeddings", hf["max_position_embeddings"])
        factor = hf["max_position_embeddings"] / original if "original_max_position_embeddings" in rs else rs["factor"]
        p.update(kind="yarn", factor=factor, original_max_position=original, beta_fast=rs.get("beta_fast") or 32,
                 beta_slow=rs.get("beta_slow") or 1, truncate=rs.get("truncate", True),
                 mscale=rs.get("mscale"), mscale_all_dim=rs.get("mscale_all_dim"))
    elif kind == "llama3":
        p.update(kind="llama3", factor=rs["factor"], original_max_position=rs["original_max_position_embeddings"],
                 low_freq_factor=rs["low_freq_factor"], high_freq_factor=rs["high_freq_factor"])
    elif kind == "longrope":
        original = hf["original_max_position_embeddings"]
        p.update(kind="longrope", factor=hf["max_position_embeddings"] / original, original_max_position=original,
                 sequence_length=seq_len, short_factor=rs["short_factor"], long_factor=rs["long_factor"])
    else:
        raise ValueError(f"unknown rope_type {kind}")
    return p


# The reading a port might follow instead, per kind (--self-test): each must disagree.
def other_readings(p):
    kind, out = p["kind"], []
    if kind == "linear":
        out.append(("factor ignored", dict(p, kind="none")))
    if kind == "ntk":
        out.append(("base * factor (no d/(d-2))", dict(p, kind="none", base=p["base"] * p["factor"])))
    if kind == "dynamic_ntk":
        out.append(("vLLM: L' = factor * L", dict(p, sequence_length=int(p["factor"] * p["original_max_position"]))))
    if kind == "yarn":
        out.append(("earlier transformers: L = max_position_embeddings",
                    dict(p, original_max_position=round(p["factor"] * p["original_max_position"]))))
        if p.get("attention_factor") is None and p.get("mscale") and p.get("mscale_all_dim"):
            out.append(("mscale and mscale_all_dim ignored: 0.1 ln(factor) + 1",
                        dict(p, mscale=None, mscale_all_dim=None)))
    if kind == "llama3":
        out.append(("every pair divided by factor", dict(p, kind="linear")))
    if kind == "longrope":
        switched = p["original_max_position"] if p["sequence_length"] > p["original_max_position"] else p["original_max_position"] + 1
        out.append(("the other factor list", dict(p, sequence_length=switched)))
    if attention(p) != 1:
        out.append(("attention factor left out", dict(p, attention_factor=1.0)))
    return out


# --- the oracle's error and the comparison --------------------------------------------------------

def blend_units(p, theta_i):
    f = mpf(p.get("factor", 1))
    if p["kind"] == "yarn":
        return 48 * f
    if p["kind"] == "llama3":
        lf, hf = mpf(p["low_freq_factor"]), mpf(p["high_freq_factor"])
        return f * (hf / (hf - lf) * (6 * abs(mpmath.log(theta_i)) + 11) + 4)
    return 0


def rho_units(p, theta_i):
    """The oracle's relative error on theta_i, in units of 2^-64 (module docstring)."""
    return 6 * abs(mpmath.log(theta_i)) + 8 + blend_units(p, theta_i)


def stored(case, root, key):
    """A .npy as float64 values: bf16 bit patterns widened, fp16 and fp32 exactly."""
    array = np.load(root / case["files"][key]["path"])
    if case["dtype"] == "bf16":
        array = (array.astype(np.uint32) << 16).view(np.float32)
    return array.astype(np.float64)


def pair_indices(spec, i):
    if spec["layout"] == "interleaved":
        return 2 * i, 2 * i + 1
    return i, i + spec["rotary_dim"] // 2


def disagreements(case, root, p, theta, a, limit):
    """Up to `limit` elements of q_expected / k_expected outside the oracle's error from this
    table's values."""
    spec = case["spec"]
    positions = np.load(root / case["files"]["positions"]["path"])
    problems = []
    for tensor in ("q", "k"):
        x = stored(case, root, tensor)
        want = np.load(root / case["files"][tensor + "_expected"]["path"])
        for t, m in enumerate(positions):
            m = int(m)
            for i, theta_i in enumerate(theta):
                angle = m * theta_i
                c, s = a * mpmath.cos(angle), a * mpmath.sin(angle)
                if spec.get("pass") == "backward":  # the gradient a R^T dy: the transposed block
                    s = -s
                slack_units = abs(angle) * (rho_units(p, theta_i) + 1) + 16
                fa, fb = pair_indices(spec, i)
                for h in range(x.shape[1]):
                    xa, xb = mpf(x[t, h, fa]), mpf(x[t, h, fb])
                    slack = a * mpmath.sqrt(xa * xa + xb * xb) * U * slack_units
                    for f, y in ((fa, xa * c - xb * s), (fb, xa * s + xb * c)):
                        if abs(mpf(want[t, h, f]) - y) > HALF_ULP * abs(y) + slack:
                            problems.append(f"{tensor}[{t},{h},{f}] position {m}: expected.npy {want[t, h, f]!r}, "
                                            f"recomputed {mpmath.nstr(y, 20)}")
                            if len(problems) >= limit:
                                return problems
            tail = x[t, :, spec["rotary_dim"]:]
            if not np.array_equal(want[t, :, spec["rotary_dim"]:], tail):
                problems.append(f"{tensor} token {t}: the tail is not the input")
    return problems


def check_case(case, root):
    """Problems with one scaled case, or [] when it agrees."""
    spec, problems = case["spec"], []
    positions = np.load(root / case["files"]["positions"]["path"])
    p = from_spec(spec)
    theta, a = table(p)
    theta_hf, a_hf = table(from_hf(case["hf_transformers"], positions))
    # The NTK config states its stretched base as a double: its rounding, 2^-53 relative, moves
    # theta_i = base'^(-2i/d) by at most that. Every other reading is the same exact formula.
    for i, (t, t_hf) in enumerate(zip(theta, theta_hf)):
        if abs(t - t_hf) > t * 2 ** -52:
            problems.append(f"theta[{i}]: spec.scaling gives {mpmath.nstr(t, 20)}, hf_transformers and "
                            f"positions give {mpmath.nstr(t_hf, 20)}")
    if abs(a - a_hf) > a * 2 ** -100:
        problems.append(f"attention factor: spec {a}, hf_transformers {a_hf}")
    manifest_a = case["tolerance"]["rotation_bound_units"]["attention_factor"]
    # frequency.h's double: a log, a division and a sqrt, each within an ulp or two.
    if abs(mpf(manifest_a) - a) > a * 2 ** -49:
        problems.append(f"manifest attention_factor {manifest_a!r}, recomputed {a}")
    theta_npy = np.load(root / case["files"]["theta"]["path"])
    for i, t in enumerate(theta):
        if abs(mpf(theta_npy[i]) - t) > t * (rho_units(p, t) * U + HALF_ULP):
            problems.append(f"theta.npy[{i}] = {theta_npy[i]!r}, recomputed {mpmath.nstr(t, 20)}")
    return problems + disagreements(case, root, p, theta, a, limit=10)


def coverage(cases):
    """Every kind in fp32 and a 16-bit storage; dynamic NTK and LongRoPE on both sides."""
    seen = set()
    for c in cases:
        s = c["spec"]["scaling"]
        side = "-"
        if s["kind"] in ("dynamic_ntk", "longrope"):
            side = "above" if s["sequence_length"] > s["original_max_position"] else "below"
        seen.add((s["kind"], side, c["dtype"] != "fp32"))
    missing = []
    for sixteen in (False, True):
        for kind in KINDS:
            sides = ("below", "above") if kind in ("dynamic_ntk", "longrope") else ("-",)
            missing += [f"{kind} {side} {'16-bit' if sixteen else 'fp32'}" for side in sides
                        if (kind, side, sixteen) not in seen]
    return missing


def main(argv):
    self_test = argv[1:2] == ["--self-test"]
    ropecheck, work = argv[-2], pathlib.Path(argv[-1])
    root = work / "golden"
    shutil.rmtree(root, ignore_errors=True)
    subprocess.run([ropecheck, "vectors", "--out", str(root)], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    manifest = json.loads((root / "manifest.json").read_text())
    cases = [c for c in manifest["cases"] if c["kind"] == "rope" and c["spec"]["scaling"]["kind"] != "none"]
    failures = [f"no scaled case for {m}" for m in coverage(cases)]
    for case in cases:
        if self_test:
            readings = other_readings(from_spec(case["spec"]))
            agreeing = [what for what, other in readings
                        if not disagreements(case, root, other, *table(other), limit=1)]
            failures += [f"{case['name']}: read with '{what}' it agrees with the vectors" for what in agreeing]
            print(f"{case['name']}: {len(readings) - len(agreeing)} of {len(readings)} other readings disagree")
            continue
        problems = check_case(case, root)
        failures += [f"{case['name']}: {problem}" for problem in problems]
        print(f"{case['name']}: {'agrees' if not problems else 'DISAGREES'}")
    for failure in failures:
        print("FAIL", failure)
    print(f"{len(cases)} scaled cases, {len(failures)} failures")
    return 1 if failures or not cases else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
