// find_gnuplot(), run_gnuplot() and gp_label() (report_gnuplot.h).
#include "reports/gnuplot.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "core/errors.h"
#include "core/executables.h"

extern char** environ;

namespace ropecheck {

namespace fs = std::filesystem;

fs::path find_gnuplot() {
  if (auto found = find_on_path("gnuplot")) return *found;
  throw InvalidInput("gnuplot not found: scripts/install-deps.sh installs gnuplot-nox");
}

void run_gnuplot(const fs::path& gnuplot, const fs::path& dir, const std::string& script,
                 const std::string& expected_output) {
  const fs::path log = dir / (script + ".log");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());  // glibc >= 2.29
  std::string program = gnuplot.string(), argument = script;
  std::vector<char*> argv = {program.data(), argument.data(), nullptr};
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    throw std::runtime_error(fmt::format("cannot run {}: {}", program, std::strerror(spawned)));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::ifstream in(log);
  std::ostringstream messages;
  messages << in.rdbuf();
  const bool exited_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  std::error_code error;
  if (!exited_ok || !fs::is_regular_file(dir / expected_output, error)) {
    throw std::runtime_error(fmt::format("gnuplot failed on {} (in {}): {}", script, dir.string(),
                                         messages.str()));
  }
  // An empty log is the normal case; keep the directory tidy for a person re-rendering.
  if (messages.str().empty()) fs::remove(log, error);
}

std::string gp_label(const std::string& text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'') {
      out += "''";
      continue;
    }
    if (std::string_view("_^{}@&~\\").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out + "'";
}

}  // namespace ropecheck
