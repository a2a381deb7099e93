// `ropecheck verify --python` as a user runs it, for the tests of Python callables (python_test,
// python_backward_test): the interpreter configure found (ROPECHECK_NUMPY_PYTHON), whether it has
// torch, the example and fixture paths, a verify run with its verify.json and statuses, a refusal
// (exit 2, one line) and one call's failure.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/build_info.h"
#include "plugins/host/plugin_host.h"
#include "tests/support/outside_problem.h"
#include "tests/support/test_process.h"

namespace ropecheck::test {

inline const std::string kPython = ROPECHECK_NUMPY_PYTHON;  // "" when configure found none with numpy

inline std::string py_source(const std::string& relative) {
  return (std::filesystem::path(ROPECHECK_SOURCE_DIR) / relative).string();
}
inline std::string py_example(const std::string& function) { return py_source("plugins/examples/python/" + function); }
inline std::string py_fixture(const std::string& function) { return py_source("tests/plugins/python/" + function); }

// Fails the test (not a skip) where configure found no interpreter with numpy: CI installs one.
#define REQUIRE_NUMPY_PYTHON()                                                                             \
  if (::ropecheck::test::kPython.empty())                                                                  \
  GTEST_FAIL() << "no python3 that imports numpy was found when configuring "                              \
                  "(install python3-numpy: scripts/install-deps.sh)"

// Whether the interpreter has torch, and a CUDA device for it: asked once (importing torch takes
// seconds).
struct PyTorchHere {
  bool torch = false, cuda = false;
};
inline const PyTorchHere& py_torch() {
  static const PyTorchHere here = [] {
    if (kPython.empty()) return PyTorchHere{};
    const int code =
        spawn({kPython, "-c", "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 3)"}).code;
    return PyTorchHere{code == 0 || code == 3, code == 0};
  }();
  return here;
}

// The PyTorch examples' own numbers, not the host's code (the numpy tests run that under the
// sanitizers): not in the sanitizer build, where torch's uninstrumented time would be spent twice.
#define REQUIRE_TORCH()                                                                                    \
  REQUIRE_NUMPY_PYTHON();                                                                                  \
  if (::ropecheck::build_info::kSanitized) GTEST_SKIP() << "the PyTorch examples are not run in the sanitizer build"; \
  if (!::ropecheck::test::py_torch().torch)                                                                \
  GTEST_SKIP() << ::ropecheck::test::kPython << " cannot import torch (Debian: python3-torch)"

inline PluginOptions py_options(double timeout = 0) {
  PluginOptions options;
  options.python_exe = kPython;
  options.timeout_seconds = timeout;
  return options;
}

struct PyVerify {
  Exited run;
  nlohmann::json json;
};

// The build's case count (RC_PARAMS' max_success, tests/CMakeLists.txt: 100, the CLI's default,
// and 25 in the sanitizer build), "100" without it.
inline std::string py_cases() {
  const char* params = std::getenv("RC_PARAMS");
  std::smatch m;
  const std::string text = params != nullptr ? params : "";
  return std::regex_search(text, m, std::regex("max_success=([0-9]+)")) ? m[1].str() : "100";
}

// `ropecheck verify --python T... [--cases N] ARGS --python-exe PY --out DIR`, and verify.json.
inline PyVerify py_verify(const std::vector<std::string>& targets, const std::vector<std::string>& args = {}) {
  const ScratchDir out;
  std::vector<std::string> command = {ROPECHECK_CLI_PATH, "verify"};
  if (std::find(args.begin(), args.end(), "--cases") == args.end()) command.insert(command.end(), {"--cases", py_cases()});
  for (const auto& t : targets) command.insert(command.end(), {"--python", t});
  command.insert(command.end(), args.begin(), args.end());
  command.insert(command.end(), {"--python-exe", kPython, "--out", out.str()});
  PyVerify v{spawn(command), {}};
  v.json = nlohmann::json::parse(slurp(out / "verify.json"), nullptr, false);
  return v;
}

// property -> status of one subject in verify.json.
inline std::map<std::string, std::string> py_statuses(const nlohmann::json& json, const std::string& subject) {
  std::map<std::string, std::string> found;
  if (!json.is_object() || !json.contains("results")) return found;
  for (const auto& r : json["results"]) {
    if (r.at("subject") == subject) found[r.at("property")] = r.at("status");
  }
  return found;
}

inline int py_count(const std::map<std::string, std::string>& statuses, const std::string& status) {
  int n = 0;
  for (const auto& [property, s] : statuses) n += s == status;
  return n;
}

// `ropecheck verify ARGS` exits 2 with `reason` as its one line on stderr.
inline void expect_refused(const std::vector<std::string>& args, const std::string& reason) {
  std::vector<std::string> command = {ROPECHECK_CLI_PATH, "verify"};
  command.insert(command.end(), args.begin(), args.end());
  const ScratchDir out;
  command.insert(command.end(), {"--out", out.str()});
  const auto run = spawn(command);
  EXPECT_EQ(run.code, 2) << run.out << run.err;
  EXPECT_TRUE(contains(run.err, reason)) << run.err;
  // One line: the reason, nothing else on stderr (the child's own output aside, which has none).
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
}

// A Python function's failure on the shared small call (outside_problem.h), with the angles a
// function without a declaration is judged by (fp32).
inline std::string py_failure(const RopeImpl& impl, bool* hang = nullptr) {
  Problem problem(64);
  problem.spec.angle_precision = AnglePrecision::fp32;
  return failure_of(impl, problem, hang);
}

}  // namespace ropecheck::test
