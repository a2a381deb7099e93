// `ropecheck history add --dir H RUN_DIR [--commit REV]`: records a finished bench (or main job)
// run, a counted run, or both, into the history H, under the commit it measured (git's HEAD of
// the checkout it runs in, unless told). RUN_DIR's bench.json is a timed entry on the host's line,
// its counted.json a counted entry on the simulated machine's line; a directory holding both
// (the main job's, a CI job that times and counts) records both, as `report` reads both. The run
// and every entry already in H are checked first; nothing is written unless all are well-formed.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "history/store.h"

namespace ropecheck::history {

struct AddOptions {
  std::filesystem::path history_dir;  // H (created when missing)
  std::filesystem::path run_dir;      // a bench.json, a counted.json, or a directory holding either or both
  std::string commit;                 // a revision; empty: HEAD of `repo`
  std::filesystem::path repo = ".";   // the git checkout the commit is looked up in
  std::string commit_date;  // ISO 8601: with `commit`, recorded as given and git is not asked
  std::string branch;       // overrides the branch git reports
  std::string machine;      // a name for the machine (machine_id.h); empty: derived. Not a counted line's
                            // (its id is the simulated machine's whatever host recorded it)
};

struct AddResult {
  StoredEntry stored;
  bool written = false;  // false: this run was already recorded under the same commit
};

struct AddedRun {
  std::vector<AddResult> entries;  // the timed one first
  std::vector<std::string> notes;  // what was left out, and why
};

// Checks the run, the options and every entry of the history, then writes the run's entries (each
// through a temporary file renamed into place) unless the same run is already there. Throws InvalidInput for bad options, a bad run (no bench.json or
// counted.json, or a malformed one), a bad file in the history (naming it), or the same run
// recorded under another commit; then nothing is written.
AddedRun add_run(const AddOptions& options);

// The command: add_run(), then what was recorded and how large the machine's history now is, on
// `out`. Returns kExitOk.
int run_history_add(const AddOptions& options, std::ostream& out);

}  // namespace ropecheck::history
