#!/usr/bin/env bash
# Doubles each derived bound of the tolerance model in turn (core/tolerance.h, core/tolerance.cc),
# rebuilds only what the impls room's tests need of it (the core library, the room's test files and
# its link), runs that room's tests and prints which fail; then restores the source and
# the library. A bound no test fails for when doubled can loosen unseen (docs/tolerance.md,
# "How tight each bound is").
# Usage: scripts/double-each-bound.sh [BUILD_DIR [NAME_REGEX]]
#        (default: build, every bound; needs a finished build there)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
only=${2:-}
[[ -x $build/tests/impls_tests ]] || { echo "no $build/tests/impls_tests: build first" >&2; exit 1; }

# name | file | perl substitution that doubles it (must match exactly once)
bounds=(
  'kRoundingUnits|core/tolerance.h|s/kRoundingUnits = 2\.0;/kRoundingUnits = 2 * 2.0;/'
  'kFp32AttentionScalingUnits|core/tolerance.h|s/kFp32AttentionScalingUnits = 1\.5;/kFp32AttentionScalingUnits = 2 * 1.5;/'
  'kFp32AngleUnits|core/tolerance.h|s/kFp32AngleUnits = 3\.5;/kFp32AngleUnits = 2 * 3.5;/'
  'fp32 angles ln(theta)/2|core/tolerance.cc|s/std::abs\(std::log\(theta\)\) \/ 2 \+/std::abs(std::log(theta)) +/'
  'bf16 storage_rounding_units|core/tolerance.cc|s/bf16: return 0x1p15/bf16: return 2 * 0x1p15/'
  'fp16 storage_rounding_units|core/tolerance.cc|s/fp16: return 0x1p12/fp16: return 2 * 0x1p12/'
  'fp16 unit_pair_norm floor|core/tolerance.cc|s/\? double\{kFp16MinNormal\}/? 2 * double{kFp16MinNormal}/'
  'norm_bound_units sqrt(2)|core/tolerance.cc|s/attention_factor \* 1\.4142135623730951 \*/attention_factor * 2 * 1.4142135623730951 */'
  'kNormBoundUnits|core/tolerance.h|s/kNormBoundUnits = 1\.4142135623730951/kNormBoundUnits = 2 * 1.4142135623730951/'
  'kSinusoidalFp64Units|core/tolerance.h|s/kSinusoidalFp64Units = 0\.25 \+ 0x1p-29;/kSinusoidalFp64Units = 2 * (0.25 + 0x1p-29);/'
  'kSinusoidalFp32RoundingUnits|core/tolerance.h|s/kSinusoidalFp32RoundingUnits = 0\.5;/kSinusoidalFp32RoundingUnits = 2 * 0.5;/'
  'sinusoidal fp32 a_i|core/tolerance.cc|s/angle \* \(exponent \+ 1\.5\)/angle * (2 * exponent + 1.5)/'
  'sinusoidal fp32 1.5 per radian|core/tolerance.cc|s/angle \* \(exponent \+ 1\.5\)/angle * (exponent + 2 * 1.5)/'
  'kRecurrencePerPairUlps|core/tolerance.h|s/kRecurrencePerPairUlps = 3\.0;/kRecurrencePerPairUlps = 2 * 3.0;/'
  'kRecurrenceConstantUlps|core/tolerance.h|s/kRecurrenceConstantUlps = 4\.0;/kRecurrenceConstantUlps = 2 * 4.0;/'
  'YaRN blend_units|core/tolerance.cc|s/return 1\.5 \* \(s\.factor - 1\.0\) \+ 0\.5;/return 2 * (1.5 * (s.factor - 1.0) + 0.5);/'
  'Llama 3 blend_units|core/tolerance.cc|s/return (\(1\.5 \* s\.high_freq_factor.*?\+\s*0\.5);/return 2 * ($1);/s'
  'gamma32|core/tolerance.h|s{return n \* kUnitRoundoff32 / \(1 - n \* kUnitRoundoff32\);}{return 2 * n * kUnitRoundoff32 / (1 - n * kUnitRoundoff32);}'
  'kUnitRoundoff32|core/tolerance.h|s{kUnitRoundoff32 = kEps32 / 2;}{kUnitRoundoff32 = 2 * kEps32 / 2;}'
)

# The commands ninja would run for the core library, the impls room's test files and its
# executable: the libraries above the core see the constants only through its functions, and
# what they check is the properties room's, not these tests'. A constant of tolerance.h that a
# test file names itself (kNormBoundUnits) needs the test files recompiled too.
commands=$(ninja -C "$build" -t commands tests/impls_tests)
mapfile -t core < <(grep -E 'ropecheck_core\.dir/|libropecheck_core\.a' <<<"$commands")
mapfile -t tests < <(grep -E 'impls_tests\.dir/.*-c ' <<<"$commands")
mapfile -t link < <(grep -E -- '-o tests/impls_tests ' <<<"$commands")
run() { for c in "$@"; do (cd "$build" && bash -c "$c") >/dev/null; done; }
relink() {
  run "${core[@]}"
  if [[ ${1:-} == core/tolerance.h ]]; then run "${tests[@]}"; fi
  run "${link[@]}"
}

saved=$(mktemp -d)
cp -p core/tolerance.h core/tolerance.cc "$saved/"
restore() { cp -p "$saved/tolerance.h" "$saved/tolerance.cc" core/; relink core/tolerance.h; rm -rf "$saved"; }
trap restore EXIT

unseen=0
for entry in "${bounds[@]}"; do
  IFS='|' read -r name file subst <<<"$entry"
  if [[ -n $only && ! $name =~ $only ]]; then continue; fi
  cp -p "$saved/tolerance.h" "$saved/tolerance.cc" core/
  perl -0pi -e "\$n = ($subst); die \"'$name' matched \$n times\\n\" unless \$n == 1" "$file"
  relink "$file"
  failed=$(RC_PARAMS="seed=1 max_success=100" "$build/tests/impls_tests" 2>&1 |
           sed -n 's|^\[  FAILED  \] \([^ ,]*\.[^ ,]*\).*|\1|p' | sort -u | paste -sd' ' || true)
  if [[ -n $failed ]]; then
    printf '%-34s doubled: fails %s\n' "$name" "$failed"
  else
    printf '%-34s doubled: every test passes\n' "$name"
    unseen=$((unseen + 1))
  fi
done
echo "$unseen of the bounds doubled passed every test of the impls room"
