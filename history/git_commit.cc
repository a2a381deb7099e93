// commit_from_git() (git_commit.h): a few `git -C REPO ...` calls through posix_spawnp, their
// stdout read through a pipe and stderr discarded (git's own messages are replaced by one that
// says what to pass instead).
#include "history/git_commit.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <optional>
#include <vector>

#include "core/errors.h"
#include "history/iso_time.h"

extern char** environ;

namespace ropecheck::history {
namespace {

struct GitResult {
  int code = -1;
  std::string out;
};

// Runs `git -C repo args...`; code 127 when git cannot be started.
GitResult run_git(const std::filesystem::path& repo, const std::vector<std::string>& args) {
  std::vector<std::string> words = {"git", "-C", repo.string()};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  int fds[2];
  if (pipe(fds) != 0) return {127, ""};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, "git", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  GitResult result;
  if (spawned != 0) {
    close(fds[0]);
    return {127, ""};
  }
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n > 0) {
      result.out.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  return result;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

CommitFacts commit_from_git(const std::filesystem::path& repo, const std::string& rev) {
  // A revision that starts with '-' would be read as an option.
  if (rev.empty() || rev.front() == '-') {
    throw InvalidInput(fmt::format("--commit '{}': not a revision", rev));
  }
  const GitResult resolved = run_git(repo, {"rev-parse", "--verify", "--quiet", rev + "^{commit}"});
  if (resolved.code == 127) {
    throw InvalidInput("git not found on PATH: pass --commit ID and --commit-date DATE instead");
  }
  if (resolved.code != 0 || first_line(resolved.out).empty()) {
    throw InvalidInput(fmt::format(
        "--commit {}: no such commit in the git checkout at '{}' (run inside the checkout, pass "
        "--repo DIR, or give --commit ID with --commit-date DATE)",
        rev, repo.string()));
  }
  CommitFacts facts;
  facts.id = first_line(resolved.out);
  const GitResult shown = run_git(repo, {"show", "-s", "--format=%cI%n%s", facts.id});
  const auto newline = shown.out.find('\n');
  const auto time = parse_iso8601(shown.out.substr(0, newline));
  if (shown.code != 0 || !time) {
    throw InvalidInput(fmt::format("git could not show commit {} in '{}'", facts.id, repo.string()));
  }
  facts.time = *time;
  if (newline != std::string::npos) facts.subject = first_line(shown.out.substr(newline + 1));
  const GitResult count = run_git(repo, {"rev-list", "--count", facts.id});
  if (count.code == 0) {
    try {
      facts.ancestors = std::stoll(first_line(count.out));
    } catch (const std::exception&) {
      facts.ancestors = 0;
    }
  }
  // The branch checked out, when the commit is on it (its tip or an ancestor): in CI that is the
  // branch being built; for a backfill, the branch the range was taken from.
  const GitResult head = run_git(repo, {"symbolic-ref", "--short", "-q", "HEAD"});
  if (head.code == 0 && !first_line(head.out).empty() &&
      run_git(repo, {"merge-base", "--is-ancestor", facts.id, "HEAD"}).code == 0) {
    facts.branch = first_line(head.out);
  }
  return facts;
}

}  // namespace ropecheck::history
