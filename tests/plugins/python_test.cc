// --python end to end: Python callables (plugins/examples/python/, tests/plugins/python/) loaded
// in-process through load_python() and verified and benched through the real binary
// (ROPECHECK_CLI_PATH), in ROPECHECK_NUMPY_PYTHON (an interpreter with numpy, found at configure
// time). The contract's numpy reference passes, each of its bug variants fails, every bad input is
// a one-line exit 2, and a function that raises, crashes, hangs or scribbles is a FAILED (HANG)
// result while ropecheck goes on.   ctest -R Python   (or build/tests/plugins_tests --gtest_filter='Python*')
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "core/build_info.h"
#include "core/errors.h"
#include "impls/oracle/oracle.h"
#include "plugins/host/plugin_host.h"
#include "plugins/host/python_host.h"
#include "tests/support/outside_problem.h"
#include "tests/support/test_process.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;
using test::contains;
using test::Exited;
using test::ScratchDir;
using test::slurp;
using test::spawn;

const std::string kPython = ROPECHECK_NUMPY_PYTHON;  // "" when configure found none with numpy

std::string py_source(const std::string& relative) { return (fs::path(ROPECHECK_SOURCE_DIR) / relative).string(); }
std::string py_example(const std::string& function) {
  return py_source("plugins/examples/python/" + function);
}
std::string py_fixture(const std::string& function) { return py_source("tests/plugins/python/" + function); }

// Fails the test (not a skip) where configure found no interpreter with numpy: CI installs one.
#define REQUIRE_NUMPY_PYTHON()                                                                       \
  if (kPython.empty()) GTEST_FAIL() << "no python3 that imports numpy was found when configuring "   \
                                       "(install python3-numpy: scripts/install-deps.sh)"

// Whether the interpreter has torch, and a CUDA device for it: asked once (importing torch takes
// seconds).
struct PyTorchHere {
  bool torch = false, cuda = false;
};
const PyTorchHere& py_torch() {
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
#define REQUIRE_TORCH()                                                                                 \
  REQUIRE_NUMPY_PYTHON();                                                                               \
  if (build_info::kSanitized) GTEST_SKIP() << "the PyTorch examples are not run in the sanitizer build"; \
  if (!py_torch().torch) GTEST_SKIP() << kPython << " cannot import torch (Debian: python3-torch)"

PluginOptions py_options(double timeout = 0) {
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
std::string py_cases() {
  const char* params = std::getenv("RC_PARAMS");
  std::smatch m;
  const std::string text = params != nullptr ? params : "";
  return std::regex_search(text, m, std::regex("max_success=([0-9]+)")) ? m[1].str() : "100";
}

// `ropecheck verify --python T... [--cases N] ARGS --python-exe PY --out DIR`, and verify.json.
PyVerify py_verify(const std::vector<std::string>& targets, const std::vector<std::string>& args = {}) {
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
std::map<std::string, std::string> py_statuses(const nlohmann::json& json, const std::string& subject) {
  std::map<std::string, std::string> found;
  if (!json.is_object() || !json.contains("results")) return found;
  for (const auto& r : json["results"]) {
    if (r.at("subject") == subject) found[r.at("property")] = r.at("status");
  }
  return found;
}

int py_count(const std::map<std::string, std::string>& statuses, const std::string& status) {
  int n = 0;
  for (const auto& [property, s] : statuses) n += s == status;
  return n;
}

// ---- the contract: a reference written from the docs passes, each bug fails ------------------

TEST(PythonContract, ReferenceWrittenFromTheContractPassesEveryProperty) {
  REQUIRE_NUMPY_PYTHON();
  const auto v = py_verify({py_fixture("contract_rope.py:correct")});
  ASSERT_EQ(v.run.code, 0) << v.run.out << v.run.err;
  const auto found = py_statuses(v.json, "python/contract_rope.correct");
  EXPECT_GE(py_count(found, "PASSED"), 10) << v.run.out;
  EXPECT_EQ(py_count(found, "FAILED"), 0) << v.run.out;
}

TEST(PythonContract, EachRealBugClassFailsWithExit1) {
  REQUIRE_NUMPY_PYTHON();
  const std::vector<std::string> bugs = {"sign_error_interleaved", "positions_fp16",
                                         "half_split_partner_from_head_dim", "cached_across_calls",
                                         "base_ignored", "k_left_alone", "raises_on_some_shapes"};
  std::vector<std::string> targets;
  for (const auto& bug : bugs) targets.push_back(py_fixture("contract_rope.py:" + bug));
  // Two properties catch every one of them (the whole suite takes 2-3 s a variant, most of it
  // shrinking each failure): the harness's check against the oracle, and one call against many.
  const auto v = py_verify(targets, {"--property", "oracle_agreement", "--property", "call_history_independence"});
  EXPECT_EQ(v.run.code, 1) << v.run.out << v.run.err;
  for (const auto& bug : bugs) {
    const auto found = py_statuses(v.json, "python/contract_rope." + bug);
    EXPECT_FALSE(found.empty()) << bug << " was not verified\n" << v.run.out;
    EXPECT_GE(py_count(found, "FAILED"), 1) << bug << " survived\n" << v.run.out;
  }
  // The exception is the result's reason, with its type and where it was raised.
  EXPECT_TRUE(contains(v.run.out, "Python function raised ValueError: grouped-query attention is not supported"))
      << v.run.out;
  EXPECT_TRUE(contains(v.run.out, "contract_rope.py")) << v.run.out;
}

// ---- the shipped examples ---------------------------------------------------------------------

TEST(PythonExamples, NumpyReferencePassesEveryPropertyItsDeclarationAdmits) {
  REQUIRE_NUMPY_PYTHON();
  const auto v = py_verify({py_example("numpy_rope.py:apply")});
  EXPECT_EQ(v.run.code, 0) << v.run.out << v.run.err;
  const auto good = py_statuses(v.json, "python/numpy_rope.apply");
  EXPECT_GE(py_count(good, "PASSED"), 10) << v.run.out;
  EXPECT_EQ(py_count(good, "FAILED"), 0) << v.run.out;
  // Linear scaling is declared: its property runs rather than being skipped.
  EXPECT_EQ(good.count("linear_scaling_interpolates") ? good.at("linear_scaling_interpolates") : "", "PASSED")
      << v.run.out;
}

TEST(PythonExamples, BrokenExampleIsKilledWithAReplayableCounterexample) {
  REQUIRE_NUMPY_PYTHON();
  const auto v = py_verify({py_example("broken_rope.py:apply")}, {"--property", "oracle_agreement"});
  EXPECT_EQ(v.run.code, 1) << v.run.out << v.run.err;
  EXPECT_EQ(py_statuses(v.json, "python/broken_rope.apply").at("oracle_agreement"), "FAILED") << v.run.out;
  EXPECT_TRUE(contains(v.run.out, "counterexample:")) << v.run.out;
  // The __REPRO line carries --python with the file made absolute, and replays the failure.
  const auto repro_at = v.run.out.find("__REPRO: ");
  ASSERT_NE(repro_at, std::string::npos) << v.run.out;
  const std::string repro = v.run.out.substr(repro_at + 9, v.run.out.find('\n', repro_at) - repro_at - 9);
  EXPECT_TRUE(contains(repro, "--python " + py_example("broken_rope.py:apply"))) << repro;
  EXPECT_TRUE(contains(repro, "--python-exe " + kPython)) << repro;
  const ScratchDir out;
  const auto replay = spawn({"/bin/sh", "-c", std::string(ROPECHECK_CLI_PATH) + " " + repro.substr(10) + " --out '" +
                                                  out.str() + "'"});
  EXPECT_EQ(replay.code, 1) << replay.out << replay.err;
  EXPECT_EQ(py_statuses(nlohmann::json::parse(slurp(out / "verify.json"), nullptr, false), "python/broken_rope.apply")
                .at("oracle_agreement"),
            "FAILED")
      << replay.out;
}

// The multi-axis port from HF's Qwen2-VL / Qwen3-VL code: every property its declaration admits
// passes, the multi-axis ones run on it (not skipped), and each real bug class of such a port fails.
TEST(PythonExamples, MropePortFromHfPassesEveryPropertyItsDeclarationAdmits) {
  REQUIRE_NUMPY_PYTHON();
  const auto v = py_verify({py_example("mrope_rope.py:apply")});
  EXPECT_EQ(v.run.code, 0) << v.run.out << v.run.err;
  const auto good = py_statuses(v.json, "python/mrope_rope.apply");
  EXPECT_GE(py_count(good, "PASSED"), 10) << v.run.out;
  EXPECT_EQ(py_count(good, "FAILED"), 0) << v.run.out;
  for (const char* property : {"axes_equal_is_1d", "section_locality"}) {
    EXPECT_EQ(good.count(property) ? good.at(property) : "", "PASSED") << property << "\n" << v.run.out;
  }
}

TEST(PythonExamples, EachMropeBugClassFailsWithExit1) {
  REQUIRE_NUMPY_PYTHON();
  const std::vector<std::string> bugs = {"sections_off_by_one", "h_w_swapped", "interleave_offset_wrong",
                                         "section_not_doubled"};
  std::vector<std::string> targets;
  for (const auto& bug : bugs) targets.push_back(py_example("mrope_rope.py:" + bug));
  const auto v = py_verify(targets, {"--property", "oracle_agreement"});
  EXPECT_EQ(v.run.code, 1) << v.run.out << v.run.err;
  for (const auto& bug : bugs) {
    const auto found = py_statuses(v.json, "python/mrope_rope." + bug);
    EXPECT_EQ(found.count("oracle_agreement") ? found.at("oracle_agreement") : "", "FAILED")
        << bug << " survived\n" << v.run.out;
  }
}

TEST(PythonExamples, PyTorchFormsAsHfAndMetaWriteThemPass) {
  REQUIRE_TORCH();
  // 25 cases (the main job's count): the same formulas run as the libtorch peers, at 100 in their
  // own tests; torch's per-call overhead makes 100 here cost 10-25 s of the suite.
  const auto v = py_verify({py_example("torch_rope.py:hf_rotate_half"), py_example("torch_rope.py:meta_complex")},
                           {"--cases", "25"});
  ASSERT_EQ(v.run.code, 0) << v.run.out << v.run.err;
  for (const char* subject : {"python/torch_rope.hf_rotate_half", "python/torch_rope.meta_complex"}) {
    const auto found = py_statuses(v.json, subject);
    EXPECT_GE(py_count(found, "PASSED"), 8) << subject << "\n" << v.run.out;
  }
}

TEST(PythonExamples, PyTorchFormsPassOnCudaWhereThereIsADevice) {
  REQUIRE_TORCH();
  if (!py_torch().cuda) GTEST_SKIP() << "no CUDA device for torch here: the *_cuda examples were not run";
  // The first call initialises CUDA (seconds): a generous watchdog.
  const auto v = py_verify({py_example("torch_rope.py:hf_rotate_half_cuda"), py_example("torch_rope.py:meta_complex_cuda")},
                           {"--plugin-timeout", "120", "--cases", "25"});
  ASSERT_EQ(v.run.code, 0) << v.run.out << v.run.err;
  EXPECT_GE(py_count(py_statuses(v.json, "python/torch_rope.hf_rotate_half_cuda"), "PASSED"), 8) << v.run.out;
  EXPECT_GE(py_count(py_statuses(v.json, "python/torch_rope.meta_complex_cuda"), "PASSED"), 8) << v.run.out;
}

// ---- bad input: one line, exit 2 --------------------------------------------------------------

void expect_refused(const std::vector<std::string>& args, const std::string& reason) {
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

TEST(PythonBadInput, EachIsOneLineAndExit2) {
  REQUIRE_NUMPY_PYTHON();
  const auto with = [](const std::string& target) {
    return std::vector<std::string>{"--python", target, "--python-exe", kPython};
  };
  expect_refused(with("ropecheck_no_such_module:apply"), "no module named 'ropecheck_no_such_module'");
  expect_refused(with(py_fixture("no_such_file.py:apply")), "no such file");
  expect_refused(with(py_fixture("contract_rope.py:no_such_function")), "has no attribute 'no_such_function'");
  expect_refused(with(py_fixture("misbehaving.py:not_callable")), "is a int, not callable");
  expect_refused(with(py_fixture("misbehaving.py:two_arguments")), "cannot be called as fn(q, k, positions, spec)");
  expect_refused(with(py_fixture("import_error.py:apply")),
                 "importing it raised ModuleNotFoundError: No module named 'ropecheck_no_such_module_anywhere'");
  expect_refused(with(py_fixture("misbehaving.py:declares_badly")), "unknown key 'layout'");
  expect_refused(with(py_fixture("axes_echo.py:declares_an_unknown_mode")),
                 "'axes': unknown axis mode '3d' (mrope, imrope, vision)");
  expect_refused(with("contract_rope"), "is not MODULE:FUNCTION");
  expect_refused({"--python", "x:y", "--python-exe", "/nonexistent/python3"}, "no such executable file");
}

// An interpreter without numpy: the same one without its site directories (where Debian's
// python3-numpy lives), behind a wrapper script named as the interpreter.
TEST(PythonBadInput, InterpreterWithoutNumpyIsOneLineAndExit2) {
  REQUIRE_NUMPY_PYTHON();
  const ScratchDir dir;
  const auto wrapper = dir / "python3-without-site";
  {
    std::ofstream script(wrapper);
    script << "#!/bin/sh\nexec " << kPython << " -S -s \"$@\"\n";
  }
  fs::permissions(wrapper, fs::perms::owner_all);
  if (spawn({wrapper.string(), "-c", "import numpy"}).code == 0) {
    GTEST_SKIP() << kPython << " -S still imports numpy (it is not in a site directory)";
  }
  expect_refused({"--python", py_fixture("contract_rope.py:correct"), "--python-exe", wrapper.string()},
                 "numpy cannot be imported by");
}

// ---- misbehaviour: FAILED or HANG, ropecheck goes on -----------------------------------------

// A Python function's failure on the shared small call (outside_problem.h), with the angles a
// function without a declaration is judged by (fp32).
std::string py_failure(const RopeImpl& impl, bool* hang = nullptr) {
  test::Problem problem(64);
  problem.spec.angle_precision = AnglePrecision::fp32;
  return test::failure_of(impl, problem, hang);
}

TEST(PythonLoad, ReferenceMatchesTheOracleAndDeclaresWhatItsAttributeSays) {
  REQUIRE_NUMPY_PYTHON();
  const auto impl = load_python(py_example("numpy_rope.py:apply"), py_options());
  EXPECT_EQ(impl->id(), "python/numpy_rope.apply");
  const auto caps = impl->capabilities();
  EXPECT_EQ(caps.angle_precisions, std::vector<AnglePrecision>{AnglePrecision::fp64});
  EXPECT_EQ(caps.scaling_kinds, (std::vector<ScalingKind>{ScalingKind::none, ScalingKind::linear}));
  EXPECT_TRUE(caps.out_of_process);
  ASSERT_NE(python_info(*impl), nullptr);
  EXPECT_EQ(plugin_info(*impl), nullptr);
  EXPECT_NE(plugin_timer(*impl), nullptr);  // bench times it as it times a plugin
  test::Problem p(64);
  p.spec.angle_precision = AnglePrecision::fp64;
  test::expect_matches_oracle(*impl, p);
  // Without a declaration: both layouts, unscaled, fp32 angles, fp32 storage.
  const auto plain = load_python(py_fixture("misbehaving.py:wrong_shape"), py_options())->capabilities();
  EXPECT_EQ(plain.layouts, (std::vector<Layout>{Layout::interleaved, Layout::half_split}));
  EXPECT_EQ(plain.angle_precisions, std::vector<AnglePrecision>{AnglePrecision::fp32});
  EXPECT_EQ(plain.scaling_kinds, std::vector<ScalingKind>{ScalingKind::none});
  EXPECT_EQ(plain.storage, StorageType::fp32);
}

TEST(PythonLoad, SixteenBitStoragesCrossAsFloat16AndBf16BitPatterns) {
  REQUIRE_NUMPY_PYTHON();
  const auto v = py_verify({py_fixture("storage16.py:fp16"), py_fixture("storage16.py:bf16")},
                           {"--property", "oracle_agreement"});
  EXPECT_EQ(v.run.code, 0) << v.run.out << v.run.err;
  for (const char* subject : {"python/storage16.fp16", "python/storage16.bf16"}) {
    EXPECT_EQ(py_count(py_statuses(v.json, subject), "PASSED"), 1) << subject << "\n" << v.run.out;
  }
}

// The spec dict a scaled call carries: HF's rope_scaling names, read back from the exception of a
// function that raises with it.
TEST(PythonLoad, ScaledSpecCarriesHfRopeScalingNames) {
  REQUIRE_NUMPY_PYTHON();
  const auto impl = load_python(py_fixture("storage16.py:echo_spec"), py_options());
  test::Problem problem(8);
  problem.spec.angle_precision = AnglePrecision::fp64;
  problem.spec.scaling.kind = ScalingKind::yarn;
  problem.spec.scaling.factor = 4;
  problem.spec.scaling.original_max_position = 4096;
  const std::string yarn = test::failure_of(*impl, problem);
  for (const char* part : {"LookupError: {", "\"layout\": \"half_split\"", "\"rotary_dim\": 8", "\"rope_type\": \"yarn\"",
                           "\"factor\": 4.0", "\"original_max_position_embeddings\": 4096", "\"beta_fast\": 32.0",
                           "\"beta_slow\": 1.0", "\"truncate\": true", "\"attention_factor\": 1.13"}) {
    EXPECT_TRUE(contains(yarn, part)) << part << "\n" << yarn;
  }
  problem.spec.scaling = {};
  problem.spec.scaling.kind = ScalingKind::longrope;
  problem.spec.scaling.factor = 8;
  problem.spec.scaling.original_max_position = 4096;
  problem.spec.scaling.sequence_length = 8192;
  problem.spec.scaling.short_factor = {1.0, 1.5, 2.0, 2.5};  // rotary_dim / 2 each
  problem.spec.scaling.long_factor = {2.0, 3.0, 4.0, 5.0};
  const std::string longrope = test::failure_of(*impl, problem);
  for (const char* part : {"\"rope_type\": \"longrope\"", "\"short_factor\": [1.0, 1.5, 2.0, 2.5]",
                           "\"long_factor\": [2.0, 3.0, 4.0, 5.0]",
                           "\"sequence_length\": 8192"}) {
    EXPECT_TRUE(contains(longrope, part)) << part << "\n" << longrope;
  }
  problem.spec.scaling = {};
  EXPECT_TRUE(contains(test::failure_of(*impl, problem), "\"rope_scaling\": null"));
}

// A multi-axis call: the spec's "axes" and "mrope_section", and positions int64 [tokens, axes] in
// the order the axes are (t, h, w; row, column), read back from a function that raises with them.
TEST(PythonLoad, MultiAxisSpecCarriesModeSectionsAndPositionsPerAxis) {
  REQUIRE_NUMPY_PYTHON();
  const auto impl = load_python(py_fixture("axes_echo.py:echo_axes"), py_options());
  EXPECT_EQ(impl->capabilities().axis_modes,
            (std::vector<AxisMode>{AxisMode::none, AxisMode::mrope, AxisMode::imrope, AxisMode::vision}));
  test::Problem problem(8);
  problem.spec.angle_precision = AnglePrecision::fp64;
  problem.set_axes({AxisMode::mrope, {1, 1, 2}}, {{0, 7, 4096, -3}, {10, 11, 12, 13}, {20, 21, 22, 23}});
  const std::string mrope = test::failure_of(*impl, problem);
  for (const char* part : {"\"axes\": \"mrope\"", "\"mrope_section\": [1, 1, 2]", "\"shape\": [4, 3]",
                           "\"dtype\": \"int64\"",
                           "\"positions\": [[0, 10, 20], [7, 11, 21], [4096, 12, 22], [-3, 13, 23]]"}) {
    EXPECT_TRUE(contains(mrope, part)) << part << "\n" << mrope;
  }
  problem.set_axes({AxisMode::imrope, {2, 1, 1}}, {{0, 7, 4096, -3}, {10, 11, 12, 13}, {20, 21, 22, 23}});
  const std::string imrope = test::failure_of(*impl, problem);
  EXPECT_TRUE(contains(imrope, "\"axes\": \"imrope\"")) << imrope;
  EXPECT_TRUE(contains(imrope, "\"mrope_section\": [2, 1, 1]")) << imrope;
  problem.set_axes({AxisMode::vision, {3, 1, 0}}, {{5, 5, 6, 6}, {0, 1, 0, 1}});
  const std::string vision = test::failure_of(*impl, problem);
  for (const char* part : {"\"axes\": \"vision\"", "\"mrope_section\": [3, 1]", "\"shape\": [4, 2]",
                           "\"positions\": [[5, 0], [5, 1], [6, 0], [6, 1]]"}) {
    EXPECT_TRUE(contains(vision, part)) << part << "\n" << vision;
  }
  // One axis: positions [tokens] as before multi-axis RoPE, the keys there and empty.
  problem.set_axes({}, {{0, 7, 4096, -3}});
  const std::string one = test::failure_of(*impl, problem);
  for (const char* part : {"\"axes\": \"none\"", "\"mrope_section\": null", "\"shape\": [4]",
                           "\"positions\": [0, 7, 4096, -3]"}) {
    EXPECT_TRUE(contains(one, part)) << part << "\n" << one;
  }
}

// The HF port against the oracle on each mode, with every axis at its own positions (a port that
// read one axis for another would be off), on both layouts and partial rotary.
TEST(PythonLoad, MropePortMatchesTheOracleOnEveryMode) {
  REQUIRE_NUMPY_PYTHON();
  const auto impl = load_python(py_example("mrope_rope.py:apply"), py_options());
  EXPECT_EQ(impl->capabilities().axis_modes,
            (std::vector<AxisMode>{AxisMode::none, AxisMode::mrope, AxisMode::imrope, AxisMode::vision}));
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    for (const PositionAxes& axes : {PositionAxes{AxisMode::mrope, {4, 6, 6}}, PositionAxes{AxisMode::imrope, {6, 5, 5}},
                                     PositionAxes{AxisMode::vision, {8, 8, 0}}, PositionAxes{AxisMode::vision, {5, 11, 0}}}) {
      test::Problem p(40, layout, 32);
      p.spec.angle_precision = AnglePrecision::fp64;
      if (axes.mode == AxisMode::vision) {
        p.set_axes(axes, {{0, 3, 3, 17}, {2, 0, 9, 1}});
      } else {
        p.set_axes(axes, {{0, 7, 4096, -3}, {1, 30, 5, 2}, {9, 2, 700, 40}});
      }
      SCOPED_TRACE(describe(p.spec));
      test::expect_matches_oracle(*impl, p);
    }
  }
  // A function that declares no axes takes one: never a multi-axis spec.
  EXPECT_EQ(load_python(py_example("numpy_rope.py:apply"), py_options())->capabilities().axis_modes,
            std::vector<AxisMode>{AxisMode::none});
}

TEST(PythonLoad, WrongReturnsAreFailuresNamingWhatCameBack) {
  REQUIRE_NUMPY_PYTHON();
  const auto failure = [](const std::string& function) {
    return py_failure(*load_python(py_fixture("misbehaving.py:" + function), py_options()));
  };
  const std::string shape = failure("wrong_shape");
  EXPECT_TRUE(contains(shape, "returned q of shape (4, 1, 64) and dtype float32; expected shape (4, 4, 64)")) << shape;
  const std::string dtype = failure("wrong_dtype");
  EXPECT_TRUE(contains(dtype, "dtype float64; expected shape (4, 4, 64) and dtype float32")) << dtype;
  EXPECT_TRUE(contains(failure("not_a_pair"), "expected None (q and k rotated in place) or a pair (q, k)"));
}

TEST(PythonLoad, WritesIntoPositionsOrPastQAreCaught) {
  REQUIRE_NUMPY_PYTHON();
  const auto failure = [](const std::string& function) {
    return py_failure(*load_python(py_fixture("misbehaving.py:" + function), py_options()));
  };
  const std::string flagged = failure("writes_positions");
  EXPECT_TRUE(contains(flagged, "Python function raised ValueError:")) << flagged;
  EXPECT_TRUE(contains(flagged, "read-only")) << flagged;
  EXPECT_TRUE(contains(flagged, "misbehaving.py\", line")) << flagged;  // where it raised
  const std::string through_address = failure("writes_positions_through_address");
  EXPECT_TRUE(contains(through_address, "Python function modified positions (read-only)")) << through_address;
  const std::string past_q = failure("writes_past_q");
  EXPECT_TRUE(contains(past_q, "Python function wrote 4 bytes past the end of q")) << past_q;
}

TEST(PythonLoad, CrashExitAndHangAreBoundedFailuresAndTheNextCallGetsAFreshWorker) {
  REQUIRE_NUMPY_PYTHON();
  const auto crashes = load_python(py_fixture("misbehaving.py:segfaults"), py_options());
  EXPECT_TRUE(contains(py_failure(*crashes), "Python function crashed with SIGSEGV"));
  EXPECT_TRUE(contains(py_failure(*crashes), "Python function crashed with SIGSEGV"));  // restarted, again
  const auto exits = load_python(py_fixture("misbehaving.py:exits"), py_options());
  EXPECT_TRUE(contains(py_failure(*exits), "Python function worker exited with status 3"));
  const auto hangs = load_python(py_fixture("misbehaving.py:hangs"), py_options(0.3));
  bool hang = false;
  const auto start = std::chrono::steady_clock::now();
  const std::string message = py_failure(*hangs, &hang);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(hang) << message;
  EXPECT_TRUE(contains(message, "Python function did not answer within 0.3 s")) << message;
  EXPECT_LT(took, 5.0);
}

TEST(PythonCli, CrashingFunctionFailsEveryPropertyBesideAPassingOne) {
  REQUIRE_NUMPY_PYTHON();
  const auto v = py_verify({py_fixture("misbehaving.py:segfaults"), py_fixture("contract_rope.py:correct")},
                           {"--cases", "5", "--property", "oracle_agreement", "--property", "identity_at_zero"});
  EXPECT_EQ(v.run.code, 1) << v.run.out << v.run.err;  // not 128 + SIGSEGV
  const auto crashed = py_statuses(v.json, "python/misbehaving.segfaults");
  EXPECT_EQ(crashed.at("oracle_agreement"), "FAILED") << v.run.out;
  EXPECT_EQ(crashed.at("identity_at_zero"), "FAILED") << v.run.out;
  EXPECT_EQ(py_statuses(v.json, "python/contract_rope.correct").at("oracle_agreement"), "PASSED") << v.run.out;
  EXPECT_TRUE(contains(v.run.out, "Python function crashed with SIGSEGV")) << v.run.out;
}

TEST(PythonCli, HangingFunctionIsHangAfterTheTimeout) {
  REQUIRE_NUMPY_PYTHON();
  const auto v = py_verify({py_fixture("misbehaving.py:hangs")},
                           {"--cases", "5", "--plugin-timeout", "0.3", "--property", "identity_at_zero"});
  EXPECT_EQ(v.run.code, 1) << v.run.out << v.run.err;
  EXPECT_EQ(py_statuses(v.json, "python/misbehaving.hangs").at("identity_at_zero"), "HANG") << v.run.out;
  EXPECT_TRUE(contains(v.run.out, "--plugin-timeout 0.3")) << v.run.out;  // __REPRO
}

TEST(PythonCli, ListShowsTheFunctionBesideTheRegistry) {
  REQUIRE_NUMPY_PYTHON();
  const auto run = spawn({ROPECHECK_CLI_PATH, "list", "--json", "--python", py_example("numpy_rope.py:apply"),
                          "--python-exe", kPython});
  ASSERT_EQ(run.code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  ASSERT_TRUE(json.contains("plugins")) << run.out;
  EXPECT_EQ(json["plugins"][0]["id"], "python/numpy_rope.apply");
  EXPECT_EQ(json["plugins"][0]["python"]["target"], py_example("numpy_rope.py:apply"));
}

// The declared axis modes, in list's JSON and in its text's AXES column.
TEST(PythonCli, ListShowsTheDeclaredAxisModes) {
  REQUIRE_NUMPY_PYTHON();
  const auto run = spawn({ROPECHECK_CLI_PATH, "list", "--json", "--python", py_example("mrope_rope.py:apply"),
                          "--python", py_example("numpy_rope.py:apply"), "--python-exe", kPython});
  ASSERT_EQ(run.code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  ASSERT_EQ(json.at("plugins").size(), 2u) << run.out;
  EXPECT_EQ(json["plugins"][0]["capabilities"]["axis_modes"],
            (std::vector<std::string>{"none", "mrope", "imrope", "vision"}));
  EXPECT_EQ(json["plugins"][0]["python"]["declaration"]["axes"],
            (std::vector<std::string>{"mrope", "imrope", "vision"}));
  EXPECT_EQ(json["plugins"][1]["capabilities"]["axis_modes"], std::vector<std::string>{"none"});
  const auto text = spawn({ROPECHECK_CLI_PATH, "list", "--python", py_example("mrope_rope.py:apply"), "--python-exe",
                           kPython});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_TRUE(std::regex_search(text.out, std::regex("SCALING +AXES +PASSES +PATH"))) << text.out;
  EXPECT_TRUE(std::regex_search(text.out, std::regex("python/mrope_rope.apply .* none +none,mrope,imrope,vision ")))
      << text.out;
}

// bench times the function in its interpreter, with the same-run probe over the same bytes.
TEST(PythonCli, BenchRowsCarryLimitFraction) {
  REQUIRE_NUMPY_PYTHON();
  const ScratchDir out;
  const auto run = spawn({ROPECHECK_CLI_PATH, "bench", "--python", py_example("numpy_rope.py:apply"), "--python-exe",
                          kPython, "--filter", "^python/.*/llama7b_decode_at4095/", "--min-time", "0.01",
                          "--repetitions", "1", "--out", out.str()});
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  const auto json = nlohmann::json::parse(slurp(out / "bench.json"));
  std::set<std::string> rows;
  for (const auto& b : json.at("benchmarks")) {
    if (b.at("name").get<std::string>().rfind("python/numpy_rope.apply/", 0) != 0) continue;
    rows.insert(b.at("run_name").get<std::string>());
    ASSERT_TRUE(b.contains("limit_fraction")) << b.dump();
    EXPECT_GT(b["limit_fraction"].get<double>(), 0) << b.dump();
    EXPECT_LT(b["limit_fraction"].get<double>(), 1) << b.dump();  // numpy is not faster than a copy
  }
  EXPECT_EQ(rows.size(), 2u) << run.out;  // both layouts, one thread
}

// The report's peers table: the Python PyTorch example beside the libtorch peer of the same form,
// from one bench run.
TEST(PythonCli, ReportListsThePyTorchExampleBesideTheLibtorchPeer) {
  REQUIRE_TORCH();
  const std::string peer = test::built_plugin("torch_hf");
  if (!fs::exists(peer)) GTEST_SKIP() << "the libtorch peers are not built here (no libtorch, or the sanitizer build)";
  const ScratchDir out;
  const auto bench = spawn({ROPECHECK_CLI_PATH, "bench", "--python", py_example("torch_rope.py:hf_rotate_half"),
                            "--python-exe", kPython, "--plugin", peer, "--filter",
                            "^(python|plugin)/.*/llama7b_decode_at4095/half_split", "--min-time", "0.01",
                            "--repetitions", "1", "--out", out.str()});
  ASSERT_EQ(bench.code, 0) << bench.out << bench.err;
  const auto report = spawn({ROPECHECK_CLI_PATH, "report", "--in", out.str(), "--out", out.str()});
  ASSERT_EQ(report.code, 0) << report.out << report.err;
  const std::string md = slurp(out / "report.md");
  const auto peers = md.find("### Peers");
  ASSERT_NE(peers, std::string::npos) << md;
  const std::string section = md.substr(peers, md.find("\n#", peers + 1) - peers);
  EXPECT_TRUE(contains(section, "python/torch_rope.hf_rotate_half/threads:1")) << section;
  EXPECT_TRUE(contains(section, "plugin/torch_hf_rotate_half/threads:1")) << section;
}

}  // namespace
}  // namespace ropecheck
