#!/usr/bin/env bash
# Calibrates `ropecheck gate --measure counted` on this machine, as gate/README.md ("Counted",
# "Calibration") reports it. Per iteration, one gate of each kind:
#   aa   A/A: the same build on both sides, the default counted gate as scripts/ci-gate.sh runs it
#        (counted and timed halves, --max-seconds 280), --threshold 1 (the counted half's) and the
#        timed half at its default;
#   s2 s5  SLOWED (default kernel/avx2, the level Valgrind counts) slowed by 2 or 5% on the current
#        side (ROPECHECK_BENCH_SLOWDOWN through a wrapper script: counted, a schedule of extra
#        calls, bench/slowdown.h), on the counted RoPE kernel cases, with as many calls as make
#        the schedule exact (50 at 2%, 20 at 5%), --threshold 1.
# Per gate: its exit code, false REGRESSIONs (any case not slowed), and whether every slowed case
# was a REGRESSION. OUT/summary.md has the table.
# Usage: scripts/calibrate-counted-gate.sh [ITERATIONS] [OUT_DIR]   (defaults: 20, /tmp/ropecheck-counted-calibration)
# Environment: ROPECHECK_BIN (default build/ropecheck), KINDS (default "s5 s2 aa"), SLOWED, GATE_ARGS.
set -euo pipefail
cd "$(dirname "$0")/.."
iterations=${1:-20}
out=${2:-/tmp/ropecheck-counted-calibration}
bin=$(realpath -m "${ROPECHECK_BIN:-build/ropecheck}")
read -r -a gate_args <<< "${GATE_ARGS:-}"
kinds=${KINDS:-s5 s2 aa}
slowed=${SLOWED:-kernel/avx2}
# The counted RoPE kernel cases: every family at the counted level, in cache and decode.
kernel_cases='^kernel(_bf16|_fp16)?/avx2/(llama3_8b_gqa_prefill512|llama7b_decode_at4095)/interleaved/real_time'
mkdir -p "$out/bin"
results=$out/results.tsv
[ -f "$results" ] || printf 'kind\titeration\texit\tfalse_regressions\tslowed_cases\tdetected\tseconds\n' >"$results"

wrapper() {  # wrapper PCT: a script acting as ropecheck with SLOWED slowed by PCT % (argv[0] kept)
  local path=$out/bin/slowed-$1
  printf '#!/bin/bash\nROPECHECK_BENCH_SLOWDOWN=%s=%s exec -a "$0" %s "$@"\n' "$slowed" "$1" "$bin" >"$path"
  chmod +x "$path"
  echo "$path"
}

# verdicts GATE_JSON: "<false REGRESSIONs> <slowed cases> <slowed cases that were REGRESSION>"
verdicts() {
  python3 - "$1" "$slowed" <<'PY'
import json, sys
try:
    g = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    print("nan nan nan"); sys.exit()
cases = list(g.get("cases", [])) + list((g.get("counted") or {}).get("cases", []))
slowed = [c for c in cases if c["name"].startswith(sys.argv[2] + "/") and "counted" in (c.get("why") or "")]
kind = sys.argv[1].split("/")[-2].split("-")[0]
if kind == "aa": slowed = []
names = {c["name"] for c in slowed}
false = sum(1 for c in cases if c["verdict"] == "REGRESSION" and c["name"] not in names)
print(false, len(slowed), sum(1 for c in slowed if c["verdict"] == "REGRESSION"))
PY
}

one_gate() {  # one_gate KIND ITERATION CURRENT ARGS...
  local kind=$1 i=$2 current=$3 dir=$out/$1-$2 code=0 t0 t1
  shift 3
  t0=$(date +%s)
  "$bin" gate --base "$bin" --current "$current" --measure counted --threshold 1 --out "$dir" --seed "$i" \
    "$@" "${gate_args[@]}" >"$dir.log" 2>&1 || code=$?
  t1=$(date +%s)
  read -r false cases detected < <(verdicts "$dir/gate.json")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$i" "$code" "$false" "$cases" "$detected" "$((t1 - t0))" >>"$results"
  echo "calibrate-counted: $kind #$i exit $code false $false slowed $detected/$cases $((t1 - t0))s" >&2
}

first=$(( $(tail -n +2 "$results" | cut -f2 | sort -n | tail -1) + 1 ))  # resumes after a stop
for i in $(seq "$first" $((first + iterations - 1))); do
  for kind in $kinds; do
    case $kind in
      aa) one_gate aa "$i" "$bin" --max-seconds 280 ;;  # as scripts/ci-gate.sh runs it
      s2) one_gate s2 "$i" "$(wrapper 2)" --filter "$kernel_cases" --counted-calls 50 ;;
      s5) one_gate s5 "$i" "$(wrapper 5)" --filter "$kernel_cases" --counted-calls 20 ;;
    esac
  done
done

python3 - "$results" >"$out/summary.md" <<'PY'
import csv, os, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
print(f"CPU: {model}, {os.cpu_count()} logical CPUs; {len(rows)} gates\n")
print("| kind | gates | PASS (0) | REGRESSION (1) | INCONCLUSIVE (3) | other | gates with a false REGRESSION | every slowed case REGRESSION | wall s (mean, max) |")
print("|---|---|---|---|---|---|---|---|---|")
for kind in ["aa", "s2", "s5"]:
    r = [x for x in rows if x["kind"] == kind]
    if not r: continue
    n = len(r)
    count = lambda code: sum(1 for x in r if x["exit"] == code)
    false = sum(1 for x in r if x["false_regressions"] not in ("0", "nan"))
    every = "-" if kind == "aa" else f"{sum(1 for x in r if x['slowed_cases'] not in ('0', 'nan') and x['detected'] == x['slowed_cases'])} / {n}"
    secs = [int(x["seconds"]) for x in r]
    print(f"| {kind} | {n} | {count('0')} | {count('1')} | {count('3')} | {n - count('0') - count('1') - count('3')} | {false} / {n} | {every} | {sum(secs)/n:.0f}, {max(secs)} |")
PY
cat "$out/summary.md"
