// The counted verdicts as people and CI read them: a table, markdown rows, JSON and JUnit test
// cases, for a counted gate (gate_report.h and the others call these) and for `compare` of two
// counted runs.
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/junit_xml.h"
#include "gate/counted_gate.h"

namespace ropecheck {

// One row per case: estimated cycles per call on each side, the change, the instructions' and
// misses' changes, the verdict; a memory note under a row where the misses moved more than the
// instructions; `why` (one per case, may be empty) under each row when given.
void print_counted_table(const CountedJudgement& judgement, const std::vector<std::string>& why, std::ostream& out);

// The line under the table: what was counted and how it was judged.
std::string counted_legend(const CountedRun& run, double threshold_percent, int calls);

std::string counted_markdown_rows(const CountedJudgement& judgement);

nlohmann::ordered_json counted_gate_json(const CountedGatePart& part);

std::vector<JUnitTestCase> counted_junit_cases(const CountedGatePart& part);

}  // namespace ropecheck
