// The report's "Counted (callgrind)" section, from counted.json (bench/format/counted_json.h): per
// case the estimated cycles, instructions, first- and last-level misses per call, and how they were
// counted and costed; with a baseline that has counted.json too, each case's change in estimated
// cycles, to two decimals (counts repeat exactly between processes: a 1% change is real).
#pragma once

#include "reports/data.h"
#include "reports/doc.h"

namespace ropecheck {

// Adds nothing when the inputs have no counted.json.
void counted_section(ReportDoc& doc, const ReportInputs& inputs);

// A per-call count: whole numbers from 1000 up, else 2 decimals (3 significant digits below 1).
std::string format_count(double per_call);

}  // namespace ropecheck
