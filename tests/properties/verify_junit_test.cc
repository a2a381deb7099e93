// `ropecheck verify --junit`: JUnit XML valid against the schema CI systems read
// (tests/support/junit.xsd, checked with xmllint), from the real binary and from known results:
// FAILED a failure with the replay command, SKIPPED and MISTRUSTED skipped (with the reason), a
// surviving mutant a failure.
//   build/tests/properties_tests --gtest_filter='VerifyJUnit.*'
#include <gtest/gtest.h>

#include <string>

#include "core/result_files.h"
#include "properties/verify/verify_junit.h"
#include "tests/support/test_process.h"

namespace ropecheck {
namespace {

using test::ScratchDir;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// xmllint's verdict on `xml` against the JUnit schema: "" when valid, else its complaint.
std::string schema_problems(const std::string& xml) {
  const ScratchDir dir("junit");
  const auto file = dir / "report.xml";
  write_text_file(xml, file);
  const auto r = test::spawn({"/usr/bin/xmllint", "--noout", "--schema", ROPECHECK_JUNIT_XSD,
                              file.string()});
  return r.code == 0 ? "" : r.err + r.out;
}

TEST(VerifyJUnit, VerifyJUnitFromTheRealBinaryIsValid) {
  const ScratchDir dir("verify_junit");
  const auto file = dir / "verify.xml";
  const auto r = test::spawn({ROPECHECK_CLI_PATH, "verify", "--impl", "kernel/scalar",
                              "--property", "oracle_agreement", "--property", "identity_at_zero",
                              "--cases", "5", "--out", dir.str(), "--junit", file.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string xml = test::slurp(file);
  EXPECT_EQ(schema_problems(xml), "") << xml;
  EXPECT_TRUE(contains(xml, "<testsuite name=\"ropecheck.verify\" tests=\"2\" failures=\"0\"")) << xml;
  EXPECT_TRUE(contains(xml, "classname=\"ropecheck.verify.kernel/scalar\" name=\"oracle_agreement\"")) << xml;
}

TEST(VerifyJUnit, VerifyJUnitMapsFailedAndSkippedAndSurvivingMutants) {
  VerifyRun run;
  run.timestamp = "2024-01-01T00:00:00Z";
  SubjectResults subject;
  subject.subject.id = "kernel/avx2";
  const auto result = [](const char* property, Status status, const char* message) {
    PropertyResult r;
    r.subject = "kernel/avx2";
    r.property = property;
    r.status = status;
    r.message = message;
    return r;
  };
  subject.results = {result("inverse", Status::passed, ""),
                     result("composition", Status::failed, "off by 3 ulp"),
                     result("tail_untouched", Status::skipped, "no partial rotary"),
                     result("identity_at_zero", Status::mistrusted, "every position 0")};
  subject.results[1].counterexample = "m = 7";
  subject.results[1].reproduce = "abc";
  run.subjects.push_back(subject);
  KillMatrix matrix;
  MutantRow killed, survivor;
  killed.mutant = "mutant/killed";
  killed.killed_by = {"inverse"};
  survivor.mutant = "mutant/survivor";
  survivor.ran = 5;
  matrix.mutants = {killed, survivor};
  const std::string xml = verify_junit(run, matrix);
  EXPECT_EQ(schema_problems(xml), "") << xml;
  EXPECT_TRUE(contains(xml, "<testsuite name=\"ropecheck.verify\" tests=\"4\" failures=\"1\" errors=\"0\" skipped=\"2\"")) << xml;
  EXPECT_TRUE(contains(xml, "<testsuite name=\"ropecheck.mutants\" tests=\"2\" failures=\"1\"")) << xml;
  EXPECT_TRUE(contains(xml, "<failure message=\"off by 3 ulp\"")) << xml;
  EXPECT_TRUE(contains(xml, "--reproduce abc")) << xml;
  EXPECT_TRUE(contains(xml, "<skipped message=\"no partial rotary\"/>")) << xml;
  EXPECT_TRUE(contains(xml, "<skipped message=\"MISTRUSTED: every position 0\"/>")) << xml;
  EXPECT_TRUE(contains(xml, "mutant survived")) << xml;
}

}  // namespace
}  // namespace ropecheck
