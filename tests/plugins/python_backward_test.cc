// --python's backward pass end to end: a backward function named in the declaration ("backward",
// plugins/examples/python/backward_rope.py, numpy) and torch.autograd through a PyTorch forward
// ("autograd": True, torch_backward_rope.py). The right ones pass the backward properties, each
// real bug is killed by the ones its statement contradicts, a forward that breaks the graph is a
// FAILED property whose reason says so, and a declaration that cannot stand is a one-line exit 2.
// Fast: no model shapes, the backward properties and the forward's oracle agreement only.
//   ctest -R PythonBackward
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/errors.h"
#include "plugins/host/python_host.h"
#include "tests/support/outside_problem.h"
#include "tests/support/python_cli.h"

namespace ropecheck {
namespace {

using test::contains;
using test::expect_refused;
using test::kPython;
using test::py_example;
using test::py_fixture;
using test::py_options;
using test::py_statuses;
using test::py_verify;
using test::ScratchDir;
using test::spawn;

// The backward properties (properties/backward_properties.cc).
const std::vector<std::string> kBackwardProperties = {"backward_oracle_agreement", "adjoint_identity",
                                                      "backward_inverts_forward", "backward_norm_preservation",
                                                      "backward_tail_untouched"};

// --property for oracle_agreement (the forward) and each backward property, without model shapes.
std::vector<std::string> backward_args(const std::string& cases) {
  std::vector<std::string> args = {"--cases", cases, "--model-shapes", "none", "--property", "oracle_agreement"};
  for (const auto& id : kBackwardProperties) args.insert(args.end(), {"--property", id});
  return args;
}

// Every property of backward_args passed for `subject`.
void expect_all_passed(const test::PyVerify& v, const std::string& subject) {
  const auto found = py_statuses(v.json, subject);
  EXPECT_EQ(found.size(), 1 + kBackwardProperties.size()) << subject << "\n" << v.run.out;
  for (const auto& [property, status] : found) EXPECT_EQ(status, "PASSED") << subject << " " << property << "\n" << v.run.out;
}

// The bug's backward fails each of `killed_by` while its forward passes.
void expect_killed(const test::PyVerify& v, const std::string& subject, const std::vector<std::string>& killed_by) {
  const auto found = py_statuses(v.json, subject);
  ASSERT_FALSE(found.empty()) << subject << " was not verified\n" << v.run.out;
  EXPECT_EQ(found.at("oracle_agreement"), "PASSED") << subject << "\n" << v.run.out;
  for (const auto& id : killed_by) EXPECT_EQ(found.at(id), "FAILED") << subject << " " << id << "\n" << v.run.out;
}

// ---- a backward declared by name (numpy) -------------------------------------------------------

TEST(PythonBackward, DeclaringABackwardGivesTheSubjectBothPasses) {
  REQUIRE_NUMPY_PYTHON();
  const auto impl = load_python(py_example("backward_rope.py:apply"), py_options());
  EXPECT_EQ(impl->capabilities().passes, (std::vector<Pass>{Pass::forward, Pass::backward}));
  EXPECT_EQ(load_python(py_example("numpy_rope.py:apply"), py_options())->capabilities().passes,
            std::vector<Pass>{Pass::forward});
  // The backward spec reaches the backward function: the gradient is the oracle's.
  test::Problem p(64, Layout::interleaved, 48);
  p.spec.angle_precision = AnglePrecision::fp64;
  p.spec.pass = Pass::backward;
  test::expect_matches_oracle(*impl, p);
}

TEST(PythonBackward, NumpyBackwardPassesTheBackwardProperties) {
  REQUIRE_NUMPY_PYTHON();
  const auto v = py_verify({py_example("backward_rope.py:apply")}, backward_args(test::py_cases()));
  EXPECT_EQ(v.run.code, 0) << v.run.out << v.run.err;
  expect_all_passed(v, "python/backward_rope.apply");
}

// The three bugs of backward_rope.c, in numpy: mutant_kill_test.cc's required kills of each.
TEST(PythonBackward, EachNumpyBackwardBugIsKilledByWhatItContradicts) {
  REQUIRE_NUMPY_PYTHON();
  const auto v = py_verify({py_example("backward_rope.py:sin_not_flipped"), py_example("backward_rope.py:factor_dropped"),
                            py_example("backward_rope.py:tail_zeroed")},
                           backward_args(test::py_cases()));
  EXPECT_EQ(v.run.code, 1) << v.run.out << v.run.err;
  expect_killed(v, "python/backward_rope.sin_not_flipped",
                {"backward_oracle_agreement", "adjoint_identity", "backward_inverts_forward"});
  expect_killed(v, "python/backward_rope.factor_dropped",
                {"backward_oracle_agreement", "adjoint_identity", "backward_inverts_forward",
                 "backward_norm_preservation"});
  expect_killed(v, "python/backward_rope.tail_zeroed", {"adjoint_identity", "backward_tail_untouched"});
}

// ---- torch.autograd through a PyTorch forward ---------------------------------------------------

TEST(PythonBackward, AutogradThroughHfAndAHandWrittenFunctionPasses) {
  REQUIRE_TORCH();
  // 25 cases: torch's per-call overhead (torch_rope.py's tests run the forward at 25 too).
  const auto v = py_verify({py_example("torch_backward_rope.py:hf_autograd"),
                            py_example("torch_backward_rope.py:fused_function")},
                           backward_args("25"));
  EXPECT_EQ(v.run.code, 0) << v.run.out << v.run.err;
  expect_all_passed(v, "python/torch_backward_rope.hf_autograd");
  expect_all_passed(v, "python/torch_backward_rope.fused_function");
}

// A numpy round trip: the right values, no graph: the backward properties fail with the reason.
// A hand-written backward with the sine's sign kept: killed as backward_rope.c's.
TEST(PythonBackward, ABrokenGraphAndAnUnflippedSineAreKilled) {
  REQUIRE_TORCH();
  const auto v = py_verify({py_example("torch_backward_rope.py:numpy_round_trip"),
                            py_example("torch_backward_rope.py:fused_sin_not_flipped")},
                           backward_args("25"));
  EXPECT_EQ(v.run.code, 1) << v.run.out << v.run.err;
  expect_killed(v, "python/torch_backward_rope.numpy_round_trip",
                {"backward_oracle_agreement", "adjoint_identity", "backward_inverts_forward"});
  EXPECT_TRUE(contains(v.run.out, "the forward's q does not require grad: the graph from the input q was broken"))
      << v.run.out;
  expect_killed(v, "python/torch_backward_rope.fused_sin_not_flipped",
                {"backward_oracle_agreement", "adjoint_identity", "backward_inverts_forward"});
}

// What torch raises where a forward breaks the graph is one line that says so, with the user's
// line; the same forward on the forward pass (tensors viewing q and k) is right.
TEST(PythonBackward, GraphBreaksTorchRaisesOnAreOneLineReasons) {
  REQUIRE_TORCH();
  test::Problem p(16, Layout::interleaved);
  p.spec.angle_precision = AnglePrecision::fp64;
  const auto in_place = load_python(py_fixture("backward_declarations.py:rotates_in_place"), py_options());
  test::expect_matches_oracle(*in_place, p);
  p.spec.pass = Pass::backward;
  const std::string wrote = test::failure_of(*in_place, p);
  EXPECT_TRUE(contains(wrote, "Python function raised GraphBroken: the forward wrote q or k in place")) << wrote;
  EXPECT_TRUE(contains(wrote, "backward_declarations.py\", line")) << wrote;  // where torch raised
  EXPECT_EQ(wrote.find('\n'), std::string::npos) << wrote;
  const auto numpy = load_python(py_fixture("backward_declarations.py:calls_numpy"), py_options());
  const std::string called = test::failure_of(*numpy, p);
  EXPECT_TRUE(contains(called, "GraphBroken: the forward called numpy() on a tensor that requires grad")) << called;
}

// ---- bad declarations: one line, exit 2 ---------------------------------------------------------

TEST(PythonBackwardBadInput, EachIsOneLineAndExit2) {
  REQUIRE_NUMPY_PYTHON();
  const auto with = [](const std::string& function) {
    return std::vector<std::string>{"--python", py_fixture("backward_declarations.py:" + function), "--python-exe",
                                    kPython};
  };
  expect_refused(with("backward_not_callable"), "'backward' is a int, not a function nor its name");
  expect_refused(with("backward_name_missing"), "'backward' names 'no_such_backward', which its module does not have");
  expect_refused(with("backward_cannot_take_the_call"), "'backward' cannot be called as fn(q, k, positions, spec)");
  expect_refused(with("both_declared"), "'backward' and 'autograd' both declared");
  expect_refused(with("autograd_on_bf16"), "'autograd' takes fp32 storage only, not 'bf16'");
}

// "autograd" where torch does not import: the same interpreter with a torch that raises on import
// ahead of the real one on its path.
TEST(PythonBackwardBadInput, AutogradWithoutTorchIsOneLineAndExit2) {
  REQUIRE_NUMPY_PYTHON();
  const ScratchDir dir;
  std::filesystem::create_directories(dir / "hidden" / "torch");
  std::ofstream(dir / "hidden" / "torch" / "__init__.py") << "raise ImportError(\"No module named 'torch'\")\n";
  const auto wrapper = dir / "python3-without-torch";
  std::ofstream(wrapper) << "#!/bin/sh\nPYTHONPATH=" << (dir / "hidden").string() << " exec " << kPython
                         << " \"$@\"\n";
  std::filesystem::permissions(wrapper, std::filesystem::perms::owner_all);
  ASSERT_NE(spawn({wrapper.string(), "-c", "import torch"}).code, 0);
  expect_refused({"--python", py_fixture("backward_declarations.py:autograd_declared"), "--python-exe", wrapper.string()},
                 "'autograd' needs torch, which");
}

// `list --python` shows the passes: forward,backward for a declared backward, forward without one.
TEST(PythonBackward, ListShowsThePasses) {
  REQUIRE_NUMPY_PYTHON();
  const auto run = spawn({ROPECHECK_CLI_PATH, "list", "--json", "--python", py_example("backward_rope.py:apply"),
                          "--python", py_example("numpy_rope.py:apply"), "--python-exe", kPython});
  ASSERT_EQ(run.code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  ASSERT_EQ(json.at("plugins").size(), 2u) << run.out;
  EXPECT_EQ(json["plugins"][0]["capabilities"]["passes"], (std::vector<std::string>{"forward", "backward"}));
  EXPECT_EQ(json["plugins"][0]["python"]["declaration"]["backward"], "apply_backward");
  EXPECT_EQ(json["plugins"][1]["capabilities"]["passes"], std::vector<std::string>{"forward"});
}

}  // namespace
}  // namespace ropecheck
