// A finished bench run (DIR/bench.json of `ropecheck bench` or the main job) as a history entry.
// Everything is checked before anything is written: a run that a history report could not read,
// or whose timings are not representative (an ASan build), is refused here, so a bad file in a
// history can only come from outside.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "history/entry.h"
#include "history/git_commit.h"

namespace ropecheck::history {

// The entry for `run` (a bench.json or a directory holding one) at `commit`, on the machine the
// run records (named `machine_name`, or a derived name when empty), written at `now`. Throws
// InvalidInput naming the file when it is not a ropecheck bench run (no ropecheck_* context,
// an errored or malformed benchmark, no case), was built with sanitizers, or was written by a
// counted bench process (its times are Valgrind's: written_while_counting).
Entry entry_from_run(const std::filesystem::path& run, const CommitFacts& commit,
                     const std::string& machine_name, std::int64_t now);

// Whether the bench.json at `run` (a file or its directory) was written by bench processes that
// counted under callgrind (`--counted-calls`: its cases carry "counted_calls"): the run's
// result is its counted.json, and its times are not times. False when it cannot be read.
bool written_while_counting(const std::filesystem::path& run);

}  // namespace ropecheck::history
