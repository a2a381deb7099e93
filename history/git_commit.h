// The commit a run is recorded under, from git: its full id, committer date, subject and the
// branch it is on. `ropecheck history add` asks git only for these facts, by running `git -C REPO`
// as a child process (no shell), so that a history entry says exactly which code it measured.
//   commit_from_git(".", "HEAD")  // the checkout the command runs in
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace ropecheck::history {

struct CommitFacts {
  std::string id;       // the full object name (what git printed), or the id as given
  std::int64_t time = 0;  // committer date, seconds since the epoch
  std::string branch;   // "" when not known
  std::string subject;  // the message's first line; "" when not known
  // The commits reachable from it, itself included (`git rev-list --count`): larger for a
  // descendant than for any of its ancestors, so it orders commits of the same second (a rebase
  // or a quick series gives many one date). 0 when not known.
  std::int64_t ancestors = 0;
};

// The commit `rev` of the git checkout holding `repo`. `branch` is the checked-out branch when
// `rev` is on it (HEAD or an ancestor), else "". Throws InvalidInput when git is not on PATH,
// `repo` is not inside a checkout, or `rev` names no commit there.
CommitFacts commit_from_git(const std::filesystem::path& repo, const std::string& rev);

}  // namespace ropecheck::history
