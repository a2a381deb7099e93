// The gate's human-readable outputs: the table on stdout and the short markdown summary for a
// pull-request comment or a CI job summary.
#pragma once

#include <iosfwd>
#include <string>

#include "gate/gate_result.h"

namespace ropecheck {

// One row per case: rounds, noise, smallest detectable change, ratio with its interval, verdict;
// under an INCONCLUSIVE row the K or threshold that would resolve it; then the notes.
void print_gate_table(const GateResult& result, std::ostream& out);

// Markdown: a headline with the verdict, a table of the cases, the settings in one line.
std::string gate_markdown(const GateResult& result);

// The advice for an INCONCLUSIVE case, e.g. "needs ~24 rounds at this noise, or passes at
// --threshold 7.9".
std::string resolve_advice(const CaseVerdict& v);

}  // namespace ropecheck
