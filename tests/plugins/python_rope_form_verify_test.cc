// `ropecheck verify --python` on the call forms (properties/rope_form_properties.cc): vLLM's
// forward_native, HF's Qwen3 and Gemma 3 QK-norm (plugins/examples/python/torch_rope_form.py) and
// the numpy form pass every property that applies to them; each bug of
// tests/plugins/python/rope_form_bugs.py fails verify where the bug says.   ctest -R PythonRopeFormVerify
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/support/python_cli.h"

namespace ropecheck {
namespace python_form_verify_test {

using test::py_count;
using test::py_example;
using test::py_fixture;
using test::py_statuses;
using test::py_verify;

const std::vector<std::string> kFormArgs = {"--model-shapes", "none"};

TEST(PythonRopeFormVerify, TheExamplesPassEveryPropertyThatAppliesToThem) {
  REQUIRE_TORCH();
  // function -> the properties that apply (the rest: SKIPPED, saying why: no QK-norm, no cache).
  const std::map<std::string, int> applying = {{"torch_rope_form.vllm_forward_native", 3},
                                               {"torch_rope_form.hf_qwen3_qk_norm", 6},
                                               {"torch_rope_form.hf_gemma3_qk_norm", 6},
                                               {"numpy_rope_form.apply", 7}};
  const auto v = py_verify({py_example("torch_rope_form.py:vllm_forward_native"),
                            py_example("torch_rope_form.py:hf_qwen3_qk_norm"),
                            py_example("torch_rope_form.py:hf_gemma3_qk_norm"), py_example("numpy_rope_form.py:apply")},
                           kFormArgs);
  EXPECT_EQ(v.run.code, 0) << v.run.out << v.run.err;
  for (const auto& [function, passed] : applying) {
    const auto statuses = py_statuses(v.json, "python/" + function);
    EXPECT_EQ(py_count(statuses, "PASSED"), passed) << function << "\n" << v.run.out;
    EXPECT_EQ(py_count(statuses, "FAILED"), 0) << function;
    EXPECT_EQ(statuses.size(), 7u) << function;  // every call-form property, run or skipped
  }
}

TEST(PythonRopeFormVerify, EachBugFailsWhereItSays) {
  REQUIRE_TORCH();
  const std::map<std::string, std::vector<std::string>> required = {
      {"k_read_with_q_head_stride", {"form_oracle_agreement", "form_untouched_outside"}},
      {"contiguous_copy_rotated", {"form_oracle_agreement"}},
      {"rotary_dim_ignored_with_norm", {"form_oracle_agreement", "qk_norm_tail_not_rotated"}},
      {"cos_and_sin_at_the_same_index", {"form_oracle_agreement", "form_cache_last_row"}},
      {"eps_dropped", {"form_oracle_agreement", "qk_norm_zero_head_finite"}},
      {"one_plus_weight_as_plain", {"form_oracle_agreement", "qk_norm_tail_not_rotated"}},
      {"norm_in_storage_declared_fp32", {"form_oracle_agreement"}},
  };
  std::vector<std::string> targets;
  for (const auto& [function, properties] : required) targets.push_back(py_fixture("rope_form_bugs.py:" + function));
  const auto v = py_verify(targets, kFormArgs);
  EXPECT_EQ(v.run.code, 1) << v.run.out << v.run.err;
  for (const auto& [function, properties] : required) {
    const auto statuses = py_statuses(v.json, "python/rope_form_bugs." + function);
    for (const auto& p : properties) {
      EXPECT_EQ(statuses.count(p) != 0 ? statuses.at(p) : "(absent)", "FAILED") << function << " by " << p << "\n"
                                                                                  << v.run.out;
    }
    // A bug of the rows, not of the rest of the buffer: nothing outside them moves.
    if (function != "k_read_with_q_head_stride") {
      EXPECT_EQ(statuses.count("form_untouched_outside") != 0 ? statuses.at("form_untouched_outside") : "(absent)",
                "PASSED")
          << function;
    }
  }
}

}  // namespace python_form_verify_test
}  // namespace ropecheck
