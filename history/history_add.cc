// add_run() and run_history_add() (history_add.h).
#include "history/history_add.h"

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <ostream>
#include <set>

#include <nlohmann/json.hpp>

#include "core/errors.h"
#include "core/exit_codes.h"
#include "core/result_files.h"
#include "bench/format/counted_json.h"
#include "history/entry_from_counted.h"
#include "history/entry_from_run.h"
#include "history/iso_time.h"

namespace ropecheck::history {
namespace {

namespace fs = std::filesystem;

CommitFacts commit_of(const AddOptions& o) {
  if (o.commit_date.empty()) {
    CommitFacts facts = commit_from_git(o.repo, o.commit.empty() ? "HEAD" : o.commit);
    if (!o.branch.empty()) facts.branch = o.branch;
    return facts;
  }
  // Given by hand (a CI job without the checkout, a synthetic history): recorded as given.
  if (o.commit.empty()) throw InvalidInput("--commit-date needs --commit: the id it is the date of");
  if (!is_file_name_id(o.commit)) {
    throw InvalidInput(fmt::format(
        "--commit '{}': with --commit-date, an id of 1-100 letters, digits, '.', '_' or '-'", o.commit));
  }
  const auto time = parse_iso8601(o.commit_date);
  if (!time) {
    throw InvalidInput(fmt::format("--commit-date '{}': not an ISO 8601 date-time such as "
                                   "2026-11-25T17:29:13+01:00 (git log --format=%cI)",
                                   o.commit_date));
  }
  return {o.commit, *time, o.branch, "", 0};
}

// A file is a counted run when its schema says so (whatever its name).
bool counted_file(const fs::path& file) {
  std::ifstream in(file);
  const auto json = nlohmann::json::parse(in, nullptr, false);
  return json.is_object() && json.value("schema", std::string()) == kCountedSchema;
}

// The entries RUN holds, at an unknown commit: bench.json timed, counted.json counted, either or
// both. A bench.json written while counting is only the by-product of its counted.json.
std::vector<Entry> run_entries(const AddOptions& o, std::int64_t now, std::vector<std::string>& notes) {
  const CommitFacts unknown{"unknown", 0, "", "", 0};
  std::error_code error;
  if (!fs::is_directory(o.run_dir, error)) {
    if (counted_file(o.run_dir)) return {entry_from_counted(o.run_dir, unknown, now)};
    return {entry_from_run(o.run_dir, unknown, o.machine, now)};
  }
  const bool timed = fs::is_regular_file(o.run_dir / "bench.json", error);
  const bool counted = is_counted_run(o.run_dir);
  if (!timed && !counted) {
    throw InvalidInput(fmt::format("{}: no bench.json there, nor counted.json (RUN_DIR: a `ropecheck bench "
                                   "--out`, main job or counted run's directory, or one of those files)",
                                   o.run_dir.string()));
  }
  std::vector<Entry> out;
  if (timed && counted && written_while_counting(o.run_dir)) {
    notes.push_back(fmt::format("note: {} was written while counting: its counted.json is recorded, not its times",
                                (o.run_dir / "bench.json").string()));
  } else if (timed) {
    out.push_back(entry_from_run(o.run_dir, unknown, o.machine, now));
  }
  if (counted) out.push_back(entry_from_counted(o.run_dir, unknown, now));
  return out;
}

std::int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

AddedRun add_run(const AddOptions& options) {
  if (options.history_dir.empty()) throw InvalidInput("--dir: the history directory is required");
  // The run first: a bad run is the likelier mistake, and is named before git is asked anything
  // (the run's digest does not depend on its commit).
  AddedRun added;
  std::vector<Entry> entries = run_entries(options, now_seconds(), added.notes);
  const CommitFacts commit = commit_of(options);
  const auto history = read_history(options.history_dir, true);
  // Every entry is checked against the history before any is written.
  for (Entry& entry : entries) {
    entry.commit = {commit.id, commit.time, commit.branch, commit.subject, commit.ancestors};
    const StoredEntry* recorded = nullptr;
    for (const auto& stored : history) {
      if (stored.entry.run.digest != entry.run.digest) continue;
      if (stored.entry.commit.id == entry.commit.id) {
        recorded = &stored;
        break;
      }
      throw InvalidInput(fmt::format(
          "{}: this run is already in the history under commit {} ({}); a run measures one "
          "commit",
          options.run_dir.string(), short_commit(stored.entry.commit.id), stored.file.string()));
    }
    // A commit's date is what orders the plots: one commit, one date across the history.
    for (const auto& stored : history) {
      if (stored.entry.commit.id == entry.commit.id && stored.entry.commit.time != entry.commit.time) {
        throw InvalidInput(fmt::format("commit {}: date {} here, but {} in {}", short_commit(entry.commit.id),
                                       format_utc(entry.commit.time), format_utc(stored.entry.commit.time),
                                       stored.file.string()));
      }
    }
    if (recorded) {
      added.entries.push_back({*recorded, false});
    } else {
      added.entries.push_back({{entry_path(options.history_dir, entry), entry}, true});
    }
  }
  for (const auto& result : added.entries) {
    if (!result.written) continue;
    const fs::path& file = result.stored.file;
    std::error_code error;
    fs::create_directories(file.parent_path(), error);
    if (error) {
      throw InvalidInput(fmt::format("cannot create '{}': {}", file.parent_path().string(), error.message()));
    }
    write_json_file(entry_to_json(result.stored.entry), file);
  }
  return added;
}

int run_history_add(const AddOptions& options, std::ostream& out) {
  const AddedRun added = add_run(options);
  for (const auto& note : added.notes) out << note << '\n';
  const auto history = read_history(options.history_dir, true);
  for (const AddResult& result : added.entries) {
    const Entry& e = result.stored.entry;
    out << fmt::format("{}: {} ({} {} cases, commit {} of {}, machine {})\n",
                       result.written ? "recorded" : "already recorded", result.stored.file.string(),
                       e.cases.size(), e.is_counted() ? "counted" : "timed", short_commit(e.commit.id),
                       format_utc(e.commit.time), e.machine.id);
    // The binary's own commit is its configure-time one; a different one is worth a look (a
    // plugin's history records the plugin's commit, and then it differs by design).
    if (!e.build.ropecheck_commit.empty() && e.build.ropecheck_commit != "unknown" &&
        e.commit.id.rfind(e.build.ropecheck_commit, 0) != 0) {
      out << fmt::format("note: the run's ropecheck binary was built at commit {}\n", e.build.ropecheck_commit);
    }
    std::set<std::string> commits;
    std::size_t runs = 0;
    for (const auto& stored : history) {
      if (stored.entry.machine.id != e.machine.id) continue;
      ++runs;
      commits.insert(stored.entry.commit.id);
    }
    out << fmt::format("history {}: {} run(s) of {} commit(s) on {}\n", options.history_dir.string(), runs,
                       commits.size(), e.machine.id);
  }
  return kExitOk;
}

}  // namespace ropecheck::history
