// `ropecheck history add --dir H RUN_DIR [--commit REV]`: records a finished bench (or main job)
// run into the history H, under the commit it measured (git's HEAD of the checkout it runs in,
// unless told). The run and every entry already in H are checked first; nothing is written
// unless all are well-formed.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <string>

#include "history/store.h"

namespace ropecheck::history {

struct AddOptions {
  std::filesystem::path history_dir;  // H (created when missing)
  std::filesystem::path run_dir;      // a bench.json or a directory holding one
  std::string commit;                 // a revision; empty: HEAD of `repo`
  std::filesystem::path repo = ".";   // the git checkout the commit is looked up in
  std::string commit_date;  // ISO 8601: with `commit`, recorded as given and git is not asked
  std::string branch;       // overrides the branch git reports
  std::string machine;      // a name for the machine (machine_id.h); empty: derived
};

struct AddResult {
  StoredEntry stored;
  bool written = false;  // false: this run was already recorded under the same commit
};

// Checks the run, the options and every entry of the history, then writes the entry (through a
// temporary file renamed into place) unless the same run is already there. Throws InvalidInput for
// bad options, a bad run, a bad file in the history (naming it), or the same run recorded under
// another commit.
AddResult add_run(const AddOptions& options);

// The command: add_run(), then what was recorded and how large the machine's history now is, on
// `out`. Returns kExitOk.
int run_history_add(const AddOptions& options, std::ostream& out);

}  // namespace ropecheck::history
