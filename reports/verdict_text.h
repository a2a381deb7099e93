// The verdict summary (verdict.h) as console lines: what the main job ends with, one screen at
// most: every list is capped (at most about 35 lines in all), and each cap says where the rest is.
#pragma once

#include <cstddef>
#include <string>

#include "reports/verdict.h"

namespace ropecheck {

// A terminal's width: no line of the summary (nor of the main job's progress) is longer. A long
// reason (a counterexample in full) is cut at it with "..."; its whole text is in verify.json,
// the report and the main job's log.
inline constexpr std::size_t kConsoleColumns = 120;

// Lines ending in '\n', none longer than kConsoleColumns; a section of the summary that has no
// data (no bench.json, no peers) is left out.
std::string verdict_text(const VerdictSummary& summary);

// `line` (no '\n') cut to `columns` with "..." where it is longer.
std::string cut_to_columns(const std::string& line, std::size_t columns = kConsoleColumns);

// Each line of `text` longer than `columns` broken at its last space within them, the rest
// indented four more than the line; a line without such a space is cut (cut_to_columns).
std::string wrap_to_columns(const std::string& text, std::size_t columns = kConsoleColumns);

// "0.946" for fractions of the limit; "14x" / "2.1x" for ratios: the digits both renderings use.
std::string format_limit(double fraction);
std::string format_times(double ratio);

}  // namespace ropecheck
