// The totals of a callgrind output file (callgrind.out): its "events:" line names the columns,
// its "totals:" line holds the sums over what was collected (trailing zero columns may be left
// out). With collection toggled around a case's calls (bench/counted_region.h), they are the
// case's counts.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "bench/format/counted_json.h"

namespace ropecheck {

struct CallgrindTotals {
  EventCounts counts;
  std::string creator;  // the "creator:" line, e.g. "callgrind-3.19.0"
};

// Parses callgrind's output text. Throws InvalidInput (naming `source`) when the events line
// lacks one of the nine events of --cache-sim=yes, or there is no totals line.
CallgrindTotals parse_callgrind_totals(std::string_view text, std::string_view source);

// Reads and parses the file.
CallgrindTotals read_callgrind_totals(const std::filesystem::path& file);

}  // namespace ropecheck
