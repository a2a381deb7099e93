#!/usr/bin/env bash
# Calibrates `ropecheck gate` end to end on this machine, as bench/README.md reports it. Per
# iteration, one real gate (default settings plus GATE_ARGS) of each kind:
#   quiet   A/A: the same build on both sides, nothing else started by this script;
#   loaded  A/A beside a 2-job compile of this project (a scratch build tree, rebuilt in a loop);
#   s5 s10 s20   the fastest fp32 kernel (SLOWED: kernel/avx512 where the CPU has AVX-512F, else
#                kernel/avx2) slowed by 5/10/20% on the current side
#                (ROPECHECK_BENCH_SLOWDOWN through a wrapper script, bench/slowdown.h);
#   code    a real code slowdown: CODE_SLOW_BIN, a build with a slower kernel (skipped when unset;
#           scripts/build-code-slowdown.sh builds one).
# It counts exit codes, false REGRESSIONs (any REGRESSION in an A/A gate; in a slowed gate, one in
# a case not slowed), detections (a slowed case REGRESSION), and writes OUT/summary.md.
# Usage: scripts/calibrate-gate.sh [ITERATIONS] [OUT_DIR]   (defaults: 20, /tmp/ropecheck-calibration)
#        scripts/calibrate-gate.sh --summary OUT_DIR         (the table of the gates run so far)
# Environment: ROPECHECK_BIN (default build/ropecheck), GATE_ARGS, KINDS (default
# "quiet s10 loaded s5 s20 code"), SLOWED, CODE_SLOW_BIN.
set -euo pipefail
cd "$(dirname "$0")/.."
summary_only=0
if [ "${1:-}" = "--summary" ]; then summary_only=1; shift; set -- 0 "$@"; fi
iterations=${1:-20}
out=${2:-/tmp/ropecheck-calibration}
bin=$(realpath -m "${ROPECHECK_BIN:-build/ropecheck}")
read -r -a gate_args <<< "${GATE_ARGS:-}"
kinds=${KINDS:-quiet s10 loaded s5 s20 code}
fastest=$(grep -qw avx512f /proc/cpuinfo && echo avx512 || echo avx2)  # as build-code-slowdown.sh
slowed=${SLOWED:-kernel/$fastest}
mkdir -p "$out/bin"
results=$out/results.tsv
[ "$summary_only" -eq 1 ] && [ ! -f "$results" ] && { echo "no $results" >&2; exit 2; }
[ -f "$results" ] || printf 'kind\titeration\texit\tfalse_regressions\tdetected\tseconds\tload_before\tload_after\n' >"$results"

# verdicts.py GATE_JSON KIND SLOWED: "<false REGRESSIONs> <slowed cases detected>". The slowed cases:
# none in an A/A gate; SLOWED's for s5/s10/s20; for code, every level of the kernel source that
# build-code-slowdown.sh changes (fp32, bf16 and fp16 at avx512, or fp32 and fp16 at avx2).
verdicts_py=$out/verdicts.py
cat >"$verdicts_py" <<'PY'
import json, sys
def judge(path, kind, slowed):
    try:
        cases = json.load(open(path))["cases"]
    except (OSError, ValueError):
        return None
    prefixes = {"quiet": (), "loaded": (),
                "code": ("kernel/avx512/", "kernel_bf16/avx512/", "kernel_fp16/avx512/")
                        if slowed.endswith("avx512") else ("kernel/avx2/", "kernel_fp16/avx2/")}.get(kind, (slowed + "/",))
    reg = [c["name"] for c in cases if c["verdict"] == "REGRESSION"]
    hit = [n for n in reg if n.startswith(prefixes)]
    return len(reg) - len(hit), len(hit)
if __name__ == "__main__":
    r = judge(*sys.argv[1:4])
    print("nan nan" if r is None else f"{r[0]} {r[1]}")
PY

wrapper() {  # wrapper PCT: a script acting as ropecheck with SLOWED slowed by PCT %
  # `exec -a "$0"`: the binary gets the gate's same-length link as its argv[0], as the base side
  # does. A longer argv[0] moved kernel_bf16 on llama3_8b_gqa_prefill512 by 9% (bench/README.md),
  # which read as a false REGRESSION in the first slowed gates.
  local path=$out/bin/slowed-$1
  printf '#!/bin/bash\nROPECHECK_BENCH_SLOWDOWN=%s=%s exec -a "$0" %s "$@"\n' "$slowed" "$1" "$bin" >"$path"
  chmod +x "$path"
  echo "$path"
}

load_pid=
start_load() {  # a 2-job compile of this project, over and over, until stop_load
  cmake -S . -B "$out/load-build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DROPECHECK_TORCH_PEERS=OFF >"$out/load.log" 2>&1
  # Its own process group (setsid), so that stop_load ends the compilers too.
  setsid bash -c 'while true; do
      cmake --build "$1" -j2 --target ropecheck >>"$2" 2>&1 || true
      cmake --build "$1" --target clean >>"$2" 2>&1 || true
    done' _ "$out/load-build" "$out/load.log" &
  load_pid=$!
  sleep 20  # let the compile get going
}
stop_load() {
  [ -n "$load_pid" ] || return 0
  kill -- -"$load_pid" 2>/dev/null || true
  wait "$load_pid" 2>/dev/null || true
  load_pid=
}
trap stop_load EXIT

one_gate() {  # one_gate KIND ITERATION CURRENT: runs a gate, appends a row to results.tsv
  local kind=$1 i=$2 current=$3 dir=$out/$1-$2 code=0
  local load_before load_after t0 t1
  load_before=$(cut -d' ' -f1 /proc/loadavg)
  t0=$(date +%s)
  "$bin" gate --base "$bin" --current "$current" --out "$dir" --seed "$i" "${gate_args[@]}" \
    >"$dir.log" 2>&1 || code=$?
  t1=$(date +%s)
  load_after=$(cut -d' ' -f1 /proc/loadavg)
  read -r false_regressions detected < <(python3 "$verdicts_py" "$dir/gate.json" "$kind" "$slowed")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$i" "$code" "$false_regressions" "$detected" \
    "$((t1 - t0))" "$load_before" "$load_after" >>"$results"
  echo "calibrate: $kind #$i exit $code false $false_regressions detected $detected $((t1 - t0))s load $load_before" >&2
}

first=$(( $(tail -n +2 "$results" | cut -f2 | sort -n | tail -1) + 1 ))  # resumes after a stop
for i in $(seq "$first" $((first + iterations - 1))); do
  for kind in $kinds; do
    case $kind in
      quiet) one_gate quiet "$i" "$bin" ;;
      s5|s10|s20) one_gate "$kind" "$i" "$(wrapper "${kind#s}")" ;;
      loaded) start_load; one_gate loaded "$i" "$bin"; stop_load ;;
      code) [ -n "${CODE_SLOW_BIN:-}" ] && one_gate code "$i" "$(realpath "$CODE_SLOW_BIN")" ;;
    esac
  done
done

python3 - "$results" "$out" "$slowed" >"$out/summary.md" <<'PY'
import csv, glob, json, os, statistics, sys
sys.path.insert(0, sys.argv[2])
from verdicts import judge
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
out = sys.argv[2]
for x in rows:  # from gate.json, so that a changed rule applies to every gate run so far
    r = judge(os.path.join(out, f"{x['kind']}-{x['iteration']}", "gate.json"), x["kind"], sys.argv[3])
    x["false_regressions"], x["detected"] = ("nan", "nan") if r is None else (str(r[0]), str(r[1]))
model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
print(f"CPU: {model}, {os.cpu_count()} logical CPUs; {len(rows)} gates\n")
print("| kind | gates | PASS (0) | REGRESSION (1) | INCONCLUSIVE (3) | other | gates with a false REGRESSION | slowed case detected | wall s (mean, max) | load avg (mean) |")
print("|---|---|---|---|---|---|---|---|---|---|")
for kind in ["quiet", "loaded", "s5", "s10", "s20", "code"]:
    r = [x for x in rows if x["kind"] == kind]
    if not r: continue
    n = len(r)
    count = lambda code: sum(1 for x in r if x["exit"] == code)
    other = n - count("0") - count("1") - count("3")
    false = sum(1 for x in r if x["false_regressions"] not in ("0", "nan"))
    det = "-" if kind in ("quiet", "loaded") else f"{sum(1 for x in r if x['detected'] not in ('0', 'nan'))} / {n}"
    secs = [int(x["seconds"]) for x in r]
    load = sum(float(x["load_before"]) + float(x["load_after"]) for x in r) / (2 * n)
    print(f"| {kind} | {n} | {count('0')} | {count('1')} | {count('3')} | {other} | {false} / {n} | {det} | {sum(secs)/n:.0f}, {max(secs)} | {load:.1f} |")

# Per case over the A/A gates: verdicts, and the between-round CV of both measures' ratios.
per_case = {}
for kind in ["quiet", "loaded"]:
    for path in sorted(glob.glob(os.path.join(out, f"{kind}-*", "gate.json"))):
        for c in json.load(open(path))["cases"]:
            e = per_case.setdefault((kind, c["name"]), {"v": [], "t": [], "l": [], "d": [], "m": []})
            e["v"].append(c["verdict"])
            e["m"].append(c.get("measure", "?"))
            e["t"].append(c["time_ratio_cv_percent"])
            if c["limit_ratio_cv_percent"] is not None: e["l"].append(c["limit_ratio_cv_percent"])
            e["d"].append(c["detectable_percent"])
if per_case:
    print("\nA/A gates per case: verdicts, the measure judged (gates judged on time / on limit), median between-round CV of the ratio (real time; same-run limit), median detectable slowdown:\n")
    print("| kind | case | PASS | INCONCLUSIVE | REGRESSION | judged on time / limit | CV real time | CV limit | detectable |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (kind, name), e in sorted(per_case.items()):
        med = lambda v: f"{statistics.median(v):.1f}%" if v else "-"
        short = name.replace("/real_time", "").replace("/threads:1", "")
        print(f"| {kind} | `{short}` | {e['v'].count('PASS')} | {e['v'].count('INCONCLUSIVE')} | {e['v'].count('REGRESSION')} | {e['m'].count('time')} / {e['m'].count('limit')} | {med(e['t'])} | {med(e['l'])} | {med(e['d'])} |")
PY
cat "$out/summary.md"
