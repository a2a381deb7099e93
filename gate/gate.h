// `ropecheck gate --base OLD --current NEW`: the CI regression gate. K rounds of fresh, paired,
// interleaved processes (gate_rounds.h), the paired t interval of the per-round ratios, Holm over
// the gated cases for REGRESSION (gate_rule.h), a verdict per case and an exit code:
//   0 PASS, 1 REGRESSION, 2 bad usage or input (nothing judged), 3 INCONCLUSIVE (no regression).
//   ropecheck gate --base build-main/ropecheck --current build/ropecheck --junit gate.xml
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "gate/gate_rounds.h"
#include "gate/gate_rule.h"
#include "gate/measure_choice.h"

namespace ropecheck {

struct GateOptions {
  // Two executables that act as the ropecheck CLI (`bench`, `list`), two plugins that this
  // binary benches itself (`bench --plugin`), or two Python functions FILE.py:FUNCTION that it
  // benches itself (`bench --python`, in python_exe): exactly one pair.
  std::string base, current;
  std::filesystem::path base_plugin, plugin;
  std::string base_python, python;
  std::string python_exe;  // empty: python3 on PATH
  // K, >= 3. Process-to-process spread dominates a process's own (bench/README.md), so the gate
  // spends its time on many short processes rather than on long ones.
  std::size_t rounds = 16;
  // Rounds run first and not judged (>= 1), each side once over the whole suite; the first also
  // finds the cases both sides have. The first processes of a gate run on a machine that has not
  // yet settled (page cache, frequency): in an A/A gate of bench/README.md the first round's
  // ratio was the furthest from 1 in 4 of 10 cases (1 expected by chance).
  std::size_t warmup_rounds = 1;
  int repetitions = 3;      // per case per process; their median is the process's value
  double min_time = 0.02;   // seconds per repetition
  double threshold_percent = 5;
  double alpha = 0.05;
  double trim = GateSettings{}.trim;  // per end of each case's sorted rounds (gate_rule.h)
  // auto: per case, the measure whose ratios spread less over `pilot_rounds` rounds run first
  // (measure_choice.h). On the AVX-512 machine of bench/README.md limit was the quieter for every
  // case; on an AVX2 machine real time was, for three of ten cases, by 4-10x.
  MeasureRule measure = MeasureRule::automatic;
  // With auto: rounds run like judged ones, after the warm-up, that only choose the measures.
  std::size_t pilot_rounds = 4;
  // > 0: after the K rounds, keep adding pairs of rounds while a gated case is INCONCLUSIVE and
  // the next pair is expected to end within this many seconds of the start.
  double max_seconds = 0;
  std::uint64_t seed = 1;  // the round order's; recorded in gate.json
  // The CPU every bench process of both sides runs on (cpu_pinning.h); -1: the highest-numbered
  // CPU the gate may run on.
  int cpu = -1;
  std::string filter;      // empty: the default rule (gated_cases.h)
  // --measure counted (gate/README.md, "Counted"): cases whose working set fits the simulated last
  // level are counted under callgrind, one process per side, and judged on estimated cycles at
  // threshold_percent; the others are timed as above (measure: auto) at timed_threshold_percent.
  bool counted = false;
  int counted_calls = 5;      // collected per case and side (counts per call do not depend on it)
  int counted_jobs = 0;       // counted processes at a time; 0: one per usable CPU
  double timed_threshold_percent = 5;
  std::filesystem::path out_dir = "reports/out/gate";
  std::filesystem::path junit, markdown;  // empty: not written
  std::vector<std::string> command_line;  // recorded in gate.json
};

// --max-seconds: whether to run another pair of rounds after `elapsed` seconds, the slowest round
// so far having taken `slowest_round`: only while some gated case is INCONCLUSIVE and none is a
// REGRESSION (more rounds cannot undo a REGRESSION's exit code), and the pair fits the budget.
bool worth_more_rounds(const GateJudgement& judgement, double elapsed, double slowest_round,
                       double max_seconds);

// Runs the gate: rounds into out_dir/{base,current}/round-NN/ (bench.json and bench.log each, so
// that `ropecheck compare out_dir/base out_dir/current` can judge the same runs again), a table
// on `out`, out_dir/gate.json, and the JUnit and markdown files when asked. Returns the exit code
// above; throws InvalidInput for bad options or a side that fails to run.
int run_gate(const GateOptions& options, std::ostream& out);

}  // namespace ropecheck
