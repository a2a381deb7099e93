#!/usr/bin/env python3
"""Calibrates the counted gate's cycle estimate against wall time (gate/README.md, "Calibration").

   cycles = Ir + a x (L1 misses served by the last level) + b x (last-level misses)

Counts come from `ropecheck count` (Valgrind's callgrind, the simulated caches of
gate/counted_runner.h); wall times from `ropecheck bench` on this machine, with the kernels at the
level Valgrind runs (ROPECHECK_ISA=avx2), so both measure the same code. Per case the model must
predict time up to one machine factor c (ns per estimated cycle): a, b and c minimise the squared
log error over the cases (a grid over a and b, c in closed form). Prints the fit and, beside it,
instructions alone and callgrind's classic weights (10, 100), as a markdown table.
Usage: scripts/calibrate-counted.py [--bin build/ropecheck] [--out /tmp/ropecheck-cycle-calibration]
"""
import argparse, json, math, os, statistics, subprocess, sys

# In cache, at the L1's size, past the last level (AVX2: the scalar kernels there would take
# minutes under Valgrind); SIMD and scalar; every storage; attention.
FILTER = ("^(kernel(_bf16|_fp16)?/avx2/(gpt2_small_prefill512|llama3_8b_gqa_prefill512|llama7b_decode_at4095|"
          "llama7b_prefill4096)/interleaved/real_time|"
          "kernel(_bf16|_fp16)?/scalar/(gpt2_small_prefill512|llama7b_decode_at4095)/interleaved/real_time|"
          "attention_blas/causal_8heads/tokens:512/head_dim:64/blas_threads:1/)")


def run(cmd, env=None):
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default="build/ropecheck")
    p.add_argument("--out", default="/tmp/ropecheck-cycle-calibration")
    p.add_argument("--reuse", action="store_true", help="read the runs already in --out")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    env = dict(os.environ, ROPECHECK_ISA="avx2", ROPECHECK_MODEL_SHAPES="none")
    if not a.reuse:
        run([a.bin, "count", "--filter", FILTER, "--calls", "2", "--out", f"{a.out}/count"], env)
        run([a.bin, "bench", "--filter", FILTER, "--threads", "1", "--repetitions", "5", "--min-time", "0.1",
             "--out", f"{a.out}/bench"], env)
    counted = {c["name"]: c for c in json.load(open(f"{a.out}/count/counted.json"))["cases"]}
    times = {}
    for b in json.load(open(f"{a.out}/bench/bench.json"))["benchmarks"]:
        if b.get("run_type") == "iteration" and b["name"] in counted:
            scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[b.get("time_unit", "ns")]
            times.setdefault(b["name"], []).append(b["real_time"] * scale)
    rows = []
    for name, c in counted.items():
        if name not in times:
            continue
        t = c["totals"]
        calls = c["calls"]
        ir = t["Ir"] / calls
        ll = (t["ILmr"] + t["DLmr"] + t["DLmw"]) / calls
        l1 = (t["I1mr"] + t["D1mr"] + t["D1mw"]) / calls - ll
        rows.append((name, ir, l1, ll, statistics.median(times[name])))

    def fit(wa, wb):
        logs = [math.log(t) - math.log(ir + wa * l1 + wb * ll) for _, ir, l1, ll, t in rows]
        c = math.exp(sum(logs) / len(logs))
        errs = [abs(x - math.log(c)) for x in logs]
        return sum(e * e for e in errs), c, errs

    best = min(((fit(wa, wb)[0], wa, wb) for wa in range(0, 41) for wb in range(0, 401, 5)))
    model = json.load(open(f"{a.out}/count/counted.json"))
    print(f"CPU: {model['cpu_model']}; {len(rows)} cases; simulated caches: {model['simulated_caches']}\n")
    print("| weights (L1 served by LL, LL miss) | ns per estimated cycle | median error | largest error |")
    print("|---|---:|---:|---:|")
    for label, wa, wb in (("fitted", best[1], best[2]), ("instructions alone", 0, 0), ("callgrind's classic", 10, 100)):
        _, c, errs = fit(wa, wb)
        print(f"| {label}: {wa}, {wb} | {c:.3f} | {100 * (math.exp(statistics.median(errs)) - 1):.0f}% | "
              f"{100 * (math.exp(max(errs)) - 1):.0f}% |")
    _, c, errs = fit(best[1], best[2])
    print("\n| case | instructions | L1 misses served by LL | LL misses | wall ns | predicted ns |")
    print("|---|---:|---:|---:|---:|---:|")
    for (name, ir, l1, ll, t), e in zip(rows, errs):
        print(f"| `{name}` | {ir:.0f} | {l1:.0f} | {ll:.0f} | {t:.0f} | {c * (ir + best[1] * l1 + best[2] * ll):.0f} |")


if __name__ == "__main__":
    sys.exit(main())
