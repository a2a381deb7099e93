#!/usr/bin/env bash
# Measures how far one build's counts move between processes whose memory is laid out differently
# (gate/README.md, "Counted": the spread behind kCountedSpreadPercent in gate/counted_rule.h). The
# same cases are counted N times, each time with an environment variable of another length, which
# moves the process's stack and its later heap allocations, as a change elsewhere in a build or
# another checkout path does; per case, the largest relative difference of estimated cycles and of
# instructions.
# Usage: scripts/counted-spread.sh [N] [OUT_DIR] [FILTER]   (defaults: 8, /tmp/ropecheck-counted-spread,
#        the counted gate's default cases)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-8}
out=${2:-/tmp/ropecheck-counted-spread}
filter=${3:-}
bin=$(realpath -m "${ROPECHECK_BIN:-build/ropecheck}")
mkdir -p "$out"
for i in $(seq 0 $((n - 1))); do
  pad=$(printf '%*s' $((i * 24)) '' | tr ' ' x)
  ROPECHECK_LAYOUT_PAD="$pad" "$bin" count ${filter:+--filter "$filter"} --out "$out/run-$i" >"$out/run-$i.log" 2>&1
done
python3 - "$out" "$n" <<'PY'
import json, sys
out, n = sys.argv[1], int(sys.argv[2])
runs = [json.load(open(f"{out}/run-{i}/counted.json")) for i in range(n)]
print(f"{n} processes per case, environments 0 to {24 * (n - 1)} bytes longer; {runs[0]['cpu_model']}\n")
print("| case | estimated cycles per call (min) | spread of estimated cycles | spread of instructions |")
print("|---|---:|---:|---:|")
worst = 0
for case in runs[0]["cases"]:
    name = case["name"]
    cyc = [c["per_call"]["estimated_cycles"] for r in runs for c in r["cases"] if c["name"] == name]
    ins = [c["per_call"]["instructions"] for r in runs for c in r["cases"] if c["name"] == name]
    s_c, s_i = 100 * (max(cyc) / min(cyc) - 1), 100 * (max(ins) / min(ins) - 1)
    worst = max(worst, s_c)
    print(f"| `{name}` | {min(cyc):.0f} | {s_c:.4f}% | {s_i:.4f}% |")
print(f"\nlargest spread of estimated cycles: {worst:.4f}%")
PY
