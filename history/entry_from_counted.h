// A finished counted run (DIR/counted.json, bench/format/counted_json.h) as a history entry. Its
// machine is the simulated one (machine_id.h counted_machine_id): the host that ran Valgrind is
// recorded, not part of the line, since the counts do not depend on it.
#pragma once

#include <cstdint>
#include <filesystem>

#include "history/entry.h"
#include "history/git_commit.h"

namespace ropecheck::history {

// The entry for `run` (a counted.json or a directory holding one) at `commit`, written at `now`.
// Throws InvalidInput naming the file when it is not a counted run (read_counted_run's checks)
// or its start date is not a date.
Entry entry_from_counted(const std::filesystem::path& run, const CommitFacts& commit, std::int64_t now);

}  // namespace ropecheck::history
