// A history on disk: a directory of entry files, H/<machine id>/<commit>-<run date>-<digest>.json,
// one per (machine, commit, run), as asv keeps results/<machine>/<commit>.json. Every *.json
// under H is an entry; hidden files and folders (a .git of a history kept in a branch) and other
// files (a README) are not read.
#pragma once

#include <filesystem>
#include <vector>

#include "history/entry.h"

namespace ropecheck::history {

struct StoredEntry {
  std::filesystem::path file;
  Entry entry;
};

// Every entry under `dir`, in path order. A missing `dir` is an empty history when
// `missing_is_empty`, else InvalidInput. Throws InvalidInput naming the first file that is not a
// well-formed entry (read_entry), or two files holding the same run (digest).
std::vector<StoredEntry> read_history(const std::filesystem::path& dir, bool missing_is_empty);

// Where `entry` belongs in the history at `dir`.
std::filesystem::path entry_path(const std::filesystem::path& dir, const Entry& entry);

}  // namespace ropecheck::history
