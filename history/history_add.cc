// add_run() and run_history_add() (history_add.h).
#include "history/history_add.h"

#include <fmt/format.h>

#include <chrono>
#include <ostream>
#include <set>

#include "core/errors.h"
#include "core/exit_codes.h"
#include "core/result_files.h"
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

std::int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

AddResult add_run(const AddOptions& options) {
  if (options.history_dir.empty()) throw InvalidInput("--dir: the history directory is required");
  // The run first: a bad run is the likelier mistake, and is named before git is asked anything
  // (the run's digest does not depend on its commit).
  Entry entry = entry_from_run(options.run_dir, CommitFacts{"unknown", 0, "", "", 0}, options.machine,
                               now_seconds());
  const CommitFacts commit = commit_of(options);
  entry.commit = {commit.id, commit.time, commit.branch, commit.subject, commit.ancestors};
  const auto history = read_history(options.history_dir, true);
  for (const auto& stored : history) {
    if (stored.entry.run.digest != entry.run.digest) continue;
    if (stored.entry.commit.id == entry.commit.id) return {stored, false};
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
  const fs::path file = entry_path(options.history_dir, entry);
  std::error_code error;
  fs::create_directories(file.parent_path(), error);
  if (error) {
    throw InvalidInput(fmt::format("cannot create '{}': {}", file.parent_path().string(), error.message()));
  }
  write_json_file(entry_to_json(entry), file);
  return {{file, std::move(entry)}, true};
}

int run_history_add(const AddOptions& options, std::ostream& out) {
  const AddResult result = add_run(options);
  const Entry& e = result.stored.entry;
  out << fmt::format("{}: {} ({} cases, commit {} of {}, machine {})\n",
                     result.written ? "recorded" : "already recorded", result.stored.file.string(),
                     e.cases.size(), short_commit(e.commit.id), format_utc(e.commit.time), e.machine.id);
  // The binary's own commit is its configure-time one; a different one is worth a look (a
  // plugin's history records the plugin's commit, and then it differs by design).
  if (!e.build.ropecheck_commit.empty() && e.build.ropecheck_commit != "unknown" &&
      e.commit.id.rfind(e.build.ropecheck_commit, 0) != 0) {
    out << fmt::format("note: the run's ropecheck binary was built at commit {}\n", e.build.ropecheck_commit);
  }
  std::set<std::string> commits;
  std::size_t runs = 0;
  for (const auto& stored : read_history(options.history_dir, true)) {
    if (stored.entry.machine.id != e.machine.id) continue;
    ++runs;
    commits.insert(stored.entry.commit.id);
  }
  out << fmt::format("history {}: {} run(s) of {} commit(s) on {}\n", options.history_dir.string(), runs,
                     commits.size(), e.machine.id);
  return kExitOk;
}

}  // namespace ropecheck::history
