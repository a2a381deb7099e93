// Dates in a history: git's committer dates (`%cI`, "2026-11-25T17:29:13+01:00") and Google
// Benchmark's run date ("2026-11-22T23:50:02+00:00") read as seconds since the epoch, and written
// back as UTC ("2026-11-25T16:29:13Z"), so that entries from runners in any time zone sort alike.
//   parse_iso8601("2026-11-25T17:29:13+01:00") == format: "2026-11-25T16:29:13Z"
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ropecheck::history {

// "YYYY-MM-DDTHH:MM:SS" with optional fractional seconds (ignored), then "Z", "+HH:MM" or
// "-HH:MM" (also "+HHMM"); nullopt for anything else, an impossible date included.
std::optional<std::int64_t> parse_iso8601(std::string_view text);

// "YYYY-MM-DDTHH:MM:SSZ".
std::string format_utc(std::int64_t seconds);

// "YYYYMMDDTHHMMSSZ": the same instant as a file-name part.
std::string compact_utc(std::int64_t seconds);

}  // namespace ropecheck::history
