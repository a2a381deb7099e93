// `ropecheck verify` on C plugins with the call forms and QK-norm (ABI 6), as a porter runs it:
// the correct example passes every form property; each build of it with one of the form's bug
// classes (plugins/examples/CMakeLists.txt's list) fails verify, and the properties that fail are
// those whose statement its bug contradicts; a crash or a write past the buffer fails too.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/test_process.h"

namespace ropecheck {
namespace {

const char* const kFormProperties[] = {"form_oracle_agreement",    "form_cache_last_row",
                                       "form_untouched_outside",   "qk_norm_matches_two_passes",
                                       "qk_norm_scale_invariant",  "qk_norm_zero_head_finite",
                                       "qk_norm_tail_not_rotated"};

// The form properties alone, on a few cases and no model shapes (test::spawn's environment): the
// cases reach each bug within the first few.
test::Exited verify_form(const std::string& library) {
  std::vector<std::string> args = {ROPECHECK_CLI_PATH, "verify", "--plugin", test::built_plugin(library),
                                   "--impl", "plugin/" + library, "--cases", "25"};
  for (const char* p : kFormProperties) {
    args.push_back("--property");
    args.push_back(p);
  }
  return test::spawn(args);
}

// The properties a bug class must fail: its bug contradicts their statement on every case that
// reaches it (rope_form_properties.cc), which the cases reach on purpose.
const std::map<std::string, std::vector<std::string>>& required_form_failures() {
  static const std::map<std::string, std::vector<std::string>> failures = {
      {"k_with_q_head_stride", {"form_oracle_agreement", "form_untouched_outside"}},
      {"strides_ignored", {"form_oracle_agreement", "form_untouched_outside"}},
      {"rotary_dim_ignored_in_norm", {"qk_norm_tail_not_rotated"}},
      {"cos_for_sin", {"form_oracle_agreement", "form_cache_last_row"}},
      {"eps_dropped", {"qk_norm_zero_head_finite"}},
      {"one_plus_flipped", {"form_oracle_agreement"}},
      {"norm_rounded_to_storage", {"form_oracle_agreement"}},
  };
  return failures;
}

TEST(RopeFormPluginVerify, TheCorrectExamplePassesEveryFormProperty) {
  const test::Exited run = verify_form("rope_form");
  EXPECT_EQ(run.code, 0) << run.out << run.err;
  for (const char* p : kFormProperties) {
    EXPECT_EQ(test::lines_containing(run.out, std::string("PASSED  plugin/rope_form  ") + p).size(), 1u)
        << p << "\n" << run.out;
  }
}

TEST(RopeFormPluginVerify, EachBugClassFailsVerifyWhereItsBugSays) {
  std::stringstream list(ROPECHECK_ROPE_FORM_BUGS);
  int classes = 0;
  for (std::string entry; std::getline(list, entry, ',');) {
    const std::string library = entry.substr(0, entry.find(':'));
    const std::string bug_class = entry.substr(entry.find(':') + 1);
    ++classes;
    const test::Exited run = verify_form(library);
    EXPECT_EQ(run.code, 1) << library << "\n" << run.out;
    const auto required = required_form_failures().find(bug_class);
    ASSERT_NE(required, required_form_failures().end()) << "add " << bug_class << " to required_form_failures()";
    for (const auto& p : required->second) {
      EXPECT_EQ(test::lines_containing(run.out, "FAILED  plugin/" + library + "  " + p).size(), 1u)
          << library << " not failed by " << p << "\n" << run.out;
    }
  }
  EXPECT_EQ(classes, 7);
}

TEST(RopeFormPluginVerify, ACrashOrAWritePastTheBufferFailsVerify) {
  for (const std::string library : {"rope_form_crash", "rope_form_overflow"}) {
    const test::Exited run = verify_form(library);
    EXPECT_EQ(run.code, 1) << library << "\n" << run.out;
    EXPECT_EQ(test::lines_containing(run.out, "PASSED  plugin/" + library).size(), 0u) << run.out;
  }
}

}  // namespace
}  // namespace ropecheck
