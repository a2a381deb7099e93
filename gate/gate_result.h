// What one gate run measured and decided, as the table, gate.json, the JUnit XML and the markdown
// summary present it (gate_report.h, gate_json.h, gate_junit.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gate/counted_gate.h"
#include "gate/gate_rounds.h"
#include "gate/gate_rule.h"
#include "gate/measure_choice.h"

namespace ropecheck {

// One case's per-process values over the rounds, in round order, both measures.
struct CaseSeries {
  std::string name;
  std::vector<double> base_time_ns, current_time_ns;
  std::vector<double> base_limit_time, current_limit_time;  // empty without limit_fraction
  GateMeasure measure = GateMeasure::time;  // the one judged
  MeasureChoice choice;        // the pilot rounds' spreads (NaN without pilot rounds)
  std::vector<double> ratios;  // of the measure judged
};

struct GateResult {
  std::string base, current;  // as given: executables or plugins
  std::string filter;
  MeasureRule measure_rule = MeasureRule::time;
  GateSettings settings;
  int repetitions = 0;
  double min_time = 0;
  std::uint64_t seed = 0;
  std::size_t warmup_rounds = 0;       // run first and discarded (GateOptions::warmup_rounds)
  std::vector<Round> pilot_rounds;     // with --measure auto: they chose each case's measure
  int cpu = -1;                        // the CPU the bench processes were pinned to; -1: none
  std::vector<Round> rounds;           // the judged rounds
  std::vector<CaseSeries> series;      // the judged cases, in the judgement's order
  GateJudgement judgement;
  std::vector<std::string> unpaired;   // case keys the warm-up found on one side only
  std::vector<std::string> notes;      // cases in one side only, a measure fallen back, ...
  std::string cpu_model;
  std::string caches;                  // e.g. "L2 1.0 MiB, L3 32.0 MiB"
  std::string started;                 // UTC, ISO 8601
  double seconds = 0;
  bool budget_used = false;            // --max-seconds added rounds
  std::vector<std::string> command_line;
  // --measure counted: the counted cases and their verdicts (ran false otherwise).
  CountedGatePart counted;
  bool timed_ran = true;  // false when a counted gate had no case to time
};

// The exit code of a gate of both halves: REGRESSION over INCONCLUSIVE over PASS.
int combined_exit_code(const GateResult& result);

// "gate: 1 REGRESSION, 0 INCONCLUSIVE, 8 PASS of 9 gated case(s) ... -> exit 1".
std::string gate_summary_line(const GateResult& result);

}  // namespace ropecheck
