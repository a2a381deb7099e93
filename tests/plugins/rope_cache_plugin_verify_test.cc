// `ropecheck verify` on C plugins with the fused cache call (ABI 5), as a porter runs it: the
// correct example passes every fused property; each build of it with one of issue 56's bug
// classes (plugins/examples/CMakeLists.txt's list) fails verify, and the properties that fail
// are those whose statement its bug contradicts; a crash or a write past the cache fails too.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/python_cli.h"
#include "tests/support/test_process.h"

namespace ropecheck {
namespace {

const char* const kFusedProperties[] = {"cache_oracle_agreement", "cache_untouched_elsewhere", "padding_inert",
                                        "fp8_saturates", "cache_dequantized_bound"};

test::Exited verify_fused(const std::string& library) {
  std::vector<std::string> args = {ROPECHECK_CLI_PATH, "verify", "--plugin", test::built_plugin(library),
                                   "--impl", "plugin/" + library};
  for (const char* p : kFusedProperties) {
    args.push_back("--property");
    args.push_back(p);
  }
  return test::spawn(args);
}

// The properties a bug class must fail: its bug contradicts their statement on every case that
// reaches it (rope_cache_properties.cc), which the cases reach on purpose.
const std::map<std::string, std::vector<std::string>>& required_failures() {
  static const std::map<std::string, std::vector<std::string>> failures = {
      {"slot_minus_one", {"cache_untouched_elsewhere", "padding_inert"}},
      {"block_offset_swapped", {"cache_oracle_agreement"}},
      {"hnd_stride_on_nhd", {"cache_oracle_agreement", "cache_untouched_elsewhere"}},
      {"scale_direction_flipped", {"cache_oracle_agreement", "cache_dequantized_bound"}},
      {"no_saturation", {"fp8_saturates"}},
      {"v_unrotated_in_k", {"cache_oracle_agreement"}},
      {"padding_rule_violated", {"padding_inert"}},
  };
  return failures;
}

TEST(RopeCachePluginVerify, TheCorrectExamplePassesEveryFusedProperty) {
  const test::Exited run = verify_fused("fused_cache_rope");
  EXPECT_EQ(run.code, 0) << run.out;
  for (const char* p : kFusedProperties) {
    EXPECT_EQ(test::lines_containing(run.out, std::string("PASSED  plugin/fused_cache_rope  ") + p).size(), 1u)
        << p << "\n" << run.out;
  }
}

TEST(RopeCachePluginVerify, EachBugClassFailsVerifyWhereItsBugSays) {
  std::stringstream list(ROPECHECK_FUSED_CACHE_BUGS);
  int classes = 0;
  for (std::string entry; std::getline(list, entry, ',');) {
    const std::string library = entry.substr(0, entry.find(':'));
    const std::string bug_class = entry.substr(entry.find(':') + 1);
    ++classes;
    const test::Exited run = verify_fused(library);
    EXPECT_EQ(run.code, 1) << library << "\n" << run.out;
    const auto required = required_failures().find(bug_class);
    ASSERT_NE(required, required_failures().end()) << "add " << bug_class << " to required_failures()";
    for (const auto& p : required->second) {
      EXPECT_EQ(test::lines_containing(run.out, "FAILED  plugin/" + library + "  " + p).size(), 1u)
          << library << " not failed by " << p << "\n" << run.out;
    }
  }
  EXPECT_EQ(classes, 7);
}

TEST(RopeCachePluginVerify, ACrashOrAWritePastTheCacheFailsVerify) {
  for (const std::string library : {"fused_cache_crash", "fused_cache_overflow"}) {
    const test::Exited run = verify_fused(library);
    EXPECT_EQ(run.code, 1) << library << "\n" << run.out;
    EXPECT_EQ(test::lines_containing(run.out, "PASSED  plugin/" + library).size(), 0u) << run.out;
  }
}

// The Python door: vLLM's torch reference forms of the fused call pass; the same with each of
// issue 56's seven bug classes (tests/plugins/python/fused_cache_bugs.py) fail verify where the
// bug says.
test::Exited verify_python_fused(const std::string& target) {
  std::vector<std::string> args = {ROPECHECK_CLI_PATH, "verify", "--python-exe", test::kPython, "--python", target};
  for (const char* p : kFusedProperties) {
    args.push_back("--property");
    args.push_back(p);
  }
  return test::spawn(args);
}

TEST(RopeCachePythonVerify, VllmsTorchReferenceFormsPassAndEachBugClassFails) {
  REQUIRE_TORCH();
  const std::string examples = std::string(ROPECHECK_SOURCE_DIR) + "/plugins/examples/python/torch_fused_cache.py";
  for (const char* form : {"vllm_fused", "vllm_fused_skip_padding"}) {
    const test::Exited run = verify_python_fused(examples + ":" + form);
    EXPECT_EQ(run.code, 0) << form << "\n" << run.out << run.err;
    EXPECT_EQ(test::lines_containing(run.out, "PASSED  python/").size(), 5u) << run.out;
  }
  const std::string bugs = std::string(ROPECHECK_SOURCE_DIR) + "/tests/plugins/python/fused_cache_bugs.py";
  const std::map<std::string, std::vector<std::string>> required = {
      {"slot_minus_one_as_index", {"cache_untouched_elsewhere", "padding_inert"}},
      {"block_and_offset_swapped", {"cache_oracle_agreement"}},
      {"no_fp8_saturation", {"fp8_saturates"}},
      {"scale_direction_flipped", {"cache_oracle_agreement", "cache_dequantized_bound"}},
      {"hnd_stride_on_nhd", {"cache_oracle_agreement", "cache_untouched_elsewhere"}},
      {"v_unrotated_in_k", {"cache_oracle_agreement"}},
      {"padding_rule_violated", {"padding_inert"}},
  };
  for (const auto& [function, properties] : required) {
    const test::Exited run = verify_python_fused(bugs + ":" + function);
    EXPECT_EQ(run.code, 1) << function << "\n" << run.out << run.err;
    for (const auto& p : properties) {
      EXPECT_EQ(test::lines_containing(run.out, "FAILED  python/fused_cache_bugs." + function + "  " + p).size(), 1u)
          << function << " not failed by " << p << "\n" << run.out;
    }
  }
}

}  // namespace
}  // namespace ropecheck
