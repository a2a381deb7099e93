// scripts/ci-gate.sh on two commits of a scratch git repository. Its "build" is cheap: the
// CMakeLists copies a committed cli/ropecheck wrapper to the top of the build tree, where the
// recipe looks for the binary, and the wrapper runs the real, already built binary; the second
// commit's wrapper slows the scalar kernel by 1000% through ROPECHECK_BENCH_SLOWDOWN (11x: under
// ASan beside other tests, a sub-microsecond decode case once showed 160% between-round noise at
// 200% and 3 rounds). The recipe must exit 1 between the commits and 0 for a commit against
// itself (a 50% threshold: no A/A verdict here depends on this machine's noise).
//   build/tests/gate_tests --gtest_filter='CiRecipe.*'
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/gate_test_case.h"
#include "tests/support/test_process.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;
using test::ScratchDir;

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

std::string sh(const std::string& script, const fs::path& cwd) {
  const auto r = test::spawn({"/bin/sh", "-c", script}, cwd);
  EXPECT_EQ(r.code, 0) << script << "\n" << r.out << r.err;
  return r.out;
}

// The build's "binary". The slowdown is set for `bench` only: the recipe runs the gate itself
// with the change's binary, and a gate's environment reaches both of its sides.
std::string wrapper(const std::string& slowdown) {
  const std::string set = slowdown.empty() ? "" : "[ \"$1\" = bench ] && export ROPECHECK_BENCH_SLOWDOWN=" + slowdown + "\n";
  return "#!/bin/sh\n" + set + "exec '" + std::string(ROPECHECK_CLI_PATH) + "' \"$@\"\n";
}

class CiRecipe : public testing::Test {
 protected:
  void SetUp() override {
    write_file(repo_ / "CMakeLists.txt",
               "cmake_minimum_required(VERSION 3.16)\nproject(scratch NONE)\n"
               "file(COPY cli/ropecheck DESTINATION ${CMAKE_BINARY_DIR} USE_SOURCE_PERMISSIONS)\n"
               "add_custom_target(ropecheck)\n");
    commit(wrapper(""), "base");
    base_ = sh("git rev-parse HEAD", repo_.path());
    commit(wrapper("kernel/scalar=1000"), "slower scalar kernel");
    change_ = sh("git rev-parse HEAD", repo_.path());
    base_.pop_back();  // newline
    change_.pop_back();
  }

  void commit(const std::string& script, const std::string& message) {
    write_file(repo_ / "cli" / "ropecheck", script);
    fs::permissions(repo_ / "cli" / "ropecheck", fs::perms::owner_all);
    sh("test -d .git || git init -q; git add -A && git -c user.name=t -c user.email=t@example.com "
       "commit -qm '" + message + "'",
       repo_.path());
  }

  int recipe(const std::string& base, const std::string& change, const std::string& work) {
    const std::string command =
        "CI_GATE_REPO='" + repo_.str() + "' CI_GATE_WORK='" + (repo_ / work).string() +
        "' CI_GATE_VERIFY_ARGS='--impl kernel/scalar --property identity_at_zero --cases 3' "
        "CI_GATE_ARGS='--filter " + test::gate_case_filter() + " --rounds 6 "
        "--repetitions 2 --min-time 0.01 --threshold 50' "
        "bash '" ROPECHECK_SOURCE_DIR "/scripts/ci-gate.sh' " + base + " " + change;
    const auto r = test::spawn({"/bin/sh", "-c", command});
    log_ = r.out + r.err;
    return r.code;
  }

  ScratchDir repo_{"ci_recipe"};
  std::string base_, change_, log_;
};

TEST_F(CiRecipe, ExitsOneOnTheSlowedCommitAndZeroOnIdenticalCommits) {
  EXPECT_EQ(recipe(base_, change_, "work-slow"), 1) << log_;
  EXPECT_NE(log_.find("ci-gate: REGRESSION"), std::string::npos) << log_;
  const auto results = repo_ / "work-slow" / "results";
  EXPECT_TRUE(fs::exists(results / "verify.junit.xml")) << log_;
  EXPECT_TRUE(fs::exists(results / "gate.junit.xml")) << log_;
  EXPECT_TRUE(fs::exists(results / "gate.md")) << log_;
  EXPECT_TRUE(fs::exists(results / "gate" / "gate.json")) << log_;

  EXPECT_EQ(recipe(base_, base_, "work-same"), 0) << log_;
  // The worktrees are removed again; the repository is as it was.
  EXPECT_EQ(sh("git worktree list | wc -l", repo_.path()), "1\n");
}

TEST_F(CiRecipe, AnUnknownRevisionIsExit2) {
  EXPECT_EQ(recipe("no-such-revision", change_, "work-bad"), 2) << log_;
}

}  // namespace
}  // namespace ropecheck
