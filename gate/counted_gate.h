// The counted half of `ropecheck gate --measure counted` (gate/README.md, "Counted"): which cases
// it counts, one callgrind process per case and side, and the verdicts. The timed half (the cases
// whose working set exceeds the simulated last level) runs as every gate's rounds do, in gate.cc.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "bench/format/counted_json.h"
#include "gate/counted_rule.h"
#include "gate/gate_rounds.h"

namespace ropecheck {

struct CountedGatePlan {
  std::filesystem::path valgrind;
  std::string filter;          // the counted cases' filter (gated_cases.h, or --filter)
  int calls = 10;
  int jobs = 1;
  double threshold_percent = 1;
  std::string counted_isa, isa_note;
};

struct CountedGatePart {
  bool ran = false;
  CountedGatePlan plan;
  std::vector<std::string> cases;  // counted on both sides
  std::vector<std::string> why;    // per case: route_case()'s reason
  CountedRun base, current;        // also DIR/counted/{base,current}/counted.json
  CountedJudgement judgement;
  double seconds = 0;
};

// The cases both sides can count for plan.filter (listed under Valgrind) whose working set fits
// the simulated last level; the others go to `unpaired` (one side only).
std::vector<std::string> counted_gate_cases(const CountedGatePlan& plan, const std::vector<GateSide>& sides,
                                            const std::filesystem::path& out_dir,
                                            std::vector<std::string>& unpaired);

// Counts `cases` on each side into out_dir/counted/<side>/ and judges them.
CountedGatePart run_counted_gate(const CountedGatePlan& plan, const std::vector<GateSide>& sides,
                                 const std::vector<std::string>& cases, const std::filesystem::path& out_dir);

}  // namespace ropecheck
