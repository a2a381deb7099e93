#!/usr/bin/env bash
# Calibrates the CI gate (`ropecheck compare`) on this machine, as bench/README.md reports it:
#   - false alarms: PAIRS A/A pairs (same build, two bench runs, compared);
#   - detection: the same baselines against runs with kernel/avx512 slowed by 5, 10 and 20 per
#     cent (ROPECHECK_BENCH_SLOWDOWN, bench/slowdown.h), counting the pairs where the gate fails
#     kernel/avx512's cases (and any other case it fails: a false alarm).
# Usage: scripts/calibrate-gate.sh [PAIRS] [OUT_DIR]   (defaults: 20, /tmp/ropecheck-calibration)
# Needs a built tree (build/ropecheck). The gate suite is GATE_FILTER below, with GATE_FLAGS.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-20}
out=${2:-/tmp/ropecheck-calibration}
bin=${ROPECHECK_BIN:-build/ropecheck}
GATE_FILTER='^kernel(_bf16)?/[a-z0-9]+/(gpt2_small_prefill512|llama7b_prefill4096|llama7b_decode_at4095)/interleaved/'
GATE_FLAGS=(--repetitions 10 --min-time 0.03 --threads 1)
SLOWED=kernel/avx512

mkdir -p "$out"
run() {  # run NAME [ENV...]: one bench run of the gate suite into $out/NAME
  local name=$1; shift
  env "$@" "$bin" bench --filter "$GATE_FILTER" "${GATE_FLAGS[@]}" --out "$out/$name" >"$out/$name.log" 2>&1
}
gate() {  # gate BASE CUR: prints "<exit code> <cases failed> <slowed cases failed>"
  local code=0
  "$bin" compare "$out/$1" "$out/$2" --json "$out/$2.compare.json" >"$out/$2.compare.log" 2>&1 || code=$?
  python3 - "$out/$2.compare.json" "$SLOWED" "$code" <<'PY'
import json, sys
cases = json.load(open(sys.argv[1]))["cases"]
failed = [c["name"] for c in cases if c["verdict"] == "REGRESSION"]
slowed = [n for n in failed if n.startswith(sys.argv[2] + "/")]
print(sys.argv[3], len(failed), len(slowed))
PY
}

start=$(date +%s)
false_alarms=0
declare -A detected=([5]=0 [10]=0 [20]=0) extra=([5]=0 [10]=0 [20]=0)
for i in $(seq 1 "$pairs"); do
  run "a$i"; run "b$i"
  read -r code failed _ < <(gate "a$i" "b$i")
  [ "$failed" -gt 0 ] && false_alarms=$((false_alarms + 1))
  for pct in 5 10 20; do
    run "s${pct}_$i" ROPECHECK_BENCH_SLOWDOWN="$SLOWED=$pct"
    read -r code failed slowed < <(gate "a$i" "s${pct}_$i")
    [ "$slowed" -gt 0 ] && detected[$pct]=$((detected[$pct] + 1))
    [ "$failed" -gt "$slowed" ] && extra[$pct]=$((extra[$pct] + 1))
  done
  echo "pair $i/$pairs: A/A false alarms so far $false_alarms; detected 5% ${detected[5]}, 10% ${detected[10]}, 20% ${detected[20]}" >&2
done
seconds=$(( $(date +%s) - start ))
runs=$((pairs * 5))
{
  echo "pairs=$pairs runs=$runs seconds=$seconds seconds_per_run=$((seconds / runs))"
  echo "aa_false_alarms=$false_alarms/$pairs"
  for pct in 5 10 20; do
    echo "slowdown_${pct}_detected=${detected[$pct]}/$pairs other_cases_failed_in=${extra[$pct]}/$pairs"
  done
} | tee "$out/summary.txt"
