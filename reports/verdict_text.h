// The verdict summary (verdict.h) as console lines: what the main job ends with, one screen at
// most: every list is capped (at most about 35 lines in all), and each cap says where the rest is.
#pragma once

#include <string>

#include "reports/verdict.h"

namespace ropecheck {

// Lines ending in '\n'; a section of the summary that has no data (no bench.json, no peers) is
// left out.
std::string verdict_text(const VerdictSummary& summary);

// "0.946" for fractions of the limit; "14x" / "2.1x" for ratios: the digits both renderings use.
std::string format_limit(double fraction);
std::string format_times(double ratio);

}  // namespace ropecheck
