// Test helpers shared by the tests that drive ropecheck from outside: read a file, make a scratch
// directory that cleans itself up, and run a program with its exit code, stdout and stderr
// captured (cli_test, plugin_test, report_test, compare_test, vectors_test).
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

extern char** environ;

namespace ropecheck::test {

// The whole file, byte for byte ("" if it cannot be read).
inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

// A plugin built beside the binary under test: ROPECHECK_PLUGIN_DIR/NAME.so (every test target
// defines ROPECHECK_PLUGIN_DIR, tests/CMakeLists.txt).
inline std::string built_plugin(const std::string& name) {
  return (std::filesystem::path(ROPECHECK_PLUGIN_DIR) / (name + ".so")).string();
}

// Whether `part` occurs in `text`, for EXPECT_TRUE(...) << text.
inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The lines of `text` (without their '\n'), and those of them that contain `part`.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}
inline std::vector<std::string> lines_containing(const std::string& text, const std::string& part) {
  std::vector<std::string> found;
  for (auto& line : lines_of(text)) {
    if (line.find(part) != std::string::npos) found.push_back(std::move(line));
  }
  return found;
}

// A fresh empty directory under gtest's temp dir (named PREFIX_XXXXXX), removed with everything
// in it at scope exit.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix = "ropecheck_test") {
    std::string pattern =
        (std::filesystem::path(testing::TempDir()) / (prefix + "_XXXXXX")).string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  std::filesystem::path operator/(const std::filesystem::path& child) const {
    return path_ / child;
  }

 private:
  std::filesystem::path path_;
};

struct Exited {
  int code = -1;  // the exit status, or 128 + signal
  std::string out;
  std::string err;
};

// Runs argv[0] with the arguments, stdout and stderr into files (no pipe can fill and block),
// optionally in `cwd`.
inline Exited spawn(const std::vector<std::string>& args, const std::filesystem::path& cwd = {}) {
  const ScratchDir dir;
  const std::string out_path = (dir / "stdout").string(), err_path = (dir / "stderr").string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  // A cross-build's tests run under its emulator (qemu-aarch64, cmake/toolchains/), and a program
  // they start is executed by the host's kernel, which runs the built CLI only where binfmt_misc
  // hands aarch64 binaries to QEMU: the CLI is started through the emulator itself, with or
  // without that (ROPECHECK_TEST_EMULATOR: tests/CMakeLists.txt; empty in a native build).
  std::vector<std::string> command = args;
  if (!std::string_view(ROPECHECK_TEST_EMULATOR).empty() && !args.empty() && args[0] == ROPECHECK_CLI_PATH) {
    command.insert(command.begin(), ROPECHECK_TEST_EMULATOR);
  }
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // A ropecheck command run here checks the plumbing of a command (a plugin's protocol, a Python
  // function's, the result files), not the kernels at real sizes: no model shapes, unless the
  // environment or the command names them (the kernels' property tests run the build's set in
  // process: test_config.h; the path mutants' tests name theirs). In the child's environment
  // only: this process's own property tests read the variable too.
  std::string no_shapes = "ROPECHECK_MODEL_SHAPES=none";
  std::vector<char*> envp;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string_view(*e).starts_with("ROPECHECK_MODEL_SHAPES=")) no_shapes.clear();
    envp.push_back(*e);
  }
  if (!no_shapes.empty()) envp.push_back(no_shapes.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) throw std::runtime_error("posix_spawn failed for " + command[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  Exited exited;
  exited.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  exited.out = slurp(out_path);
  exited.err = slurp(err_path);
  return exited;
}

}  // namespace ropecheck::test
