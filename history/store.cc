// read_history() and entry_path() (store.h).
#include "history/store.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <system_error>

#include "core/errors.h"
#include "history/iso_time.h"

namespace ropecheck::history {

namespace fs = std::filesystem;

std::vector<StoredEntry> read_history(const fs::path& dir, bool missing_is_empty) {
  std::error_code error;
  if (!fs::exists(dir, error)) {
    if (missing_is_empty) return {};
    throw InvalidInput(fmt::format("--dir {}: no such history directory (start one with "
                                   "`ropecheck history add --dir {} RUN_DIR`)",
                                   dir.string(), dir.string()));
  }
  if (!fs::is_directory(dir, error)) {
    throw InvalidInput(fmt::format("--dir {}: not a directory", dir.string()));
  }
  std::vector<fs::path> files;
  fs::recursive_directory_iterator it(dir, error), end;
  for (; !error && it != end; it.increment(error)) {
    const fs::path& path = it->path();
    if (path.filename().string().front() == '.') {
      if (it->is_directory(error)) it.disable_recursion_pending();
      continue;
    }
    if (path.extension() == ".json" && it->is_regular_file(error)) files.push_back(path);
  }
  if (error) throw InvalidInput(fmt::format("--dir {}: cannot list: {}", dir.string(), error.message()));
  std::sort(files.begin(), files.end());
  std::vector<StoredEntry> entries;
  std::map<std::string, fs::path> by_digest;
  for (const auto& file : files) {
    Entry entry = read_entry(file);
    // One run counted twice would weigh twice in every statistic of its commit.
    const auto [seen, fresh] = by_digest.emplace(entry.run.digest, file);
    if (!fresh) {
      throw InvalidInput(fmt::format("{}: the same run (digest {}) as {}: remove one of them",
                                     file.string(), entry.run.digest, seen->second.string()));
    }
    entries.push_back({file, std::move(entry)});
  }
  return entries;
}

fs::path entry_path(const fs::path& dir, const Entry& entry) {
  return dir / entry.machine.id /
         fmt::format("{}-{}-{}.json", short_commit(entry.commit.id), compact_utc(entry.run.time),
                     entry.run.digest.substr(0, 8));
}

}  // namespace ropecheck::history
