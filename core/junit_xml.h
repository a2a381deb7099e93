// JUnit XML, the test-report format CI systems read (Jenkins, GitLab, GitHub actions that publish
// test results): <testsuites> of <testsuite> of <testcase>, a <failure> or <skipped> child for a
// case that did not pass. Written by `ropecheck verify --junit` and `ropecheck gate --junit`.
//   write_text_file(junit_xml({suite}), "verify.junit.xml");
#pragma once

#include <string>
#include <vector>

namespace ropecheck {

struct JUnitTestCase {
  enum class Outcome { passed, failure, skipped };
  std::string classname;  // the group CI systems show the case under, e.g. "ropecheck.gate"
  std::string name;
  double seconds = 0;
  Outcome outcome = Outcome::passed;
  std::string message;  // one line: the failure's or skip's message attribute
  std::string details;  // the failure element's text (several lines allowed)
};

struct JUnitTestSuite {
  std::string name;
  std::string timestamp;  // ISO 8601, e.g. "2024-05-01T12:00:00"; empty: left out
  double seconds = 0;
  std::vector<JUnitTestCase> cases;
};

// The XML document (UTF-8, with the counts tests/failures/errors/skipped on every suite and on the
// root). Text and attributes are escaped; characters XML 1.0 forbids are replaced by '?'.
std::string junit_xml(const std::vector<JUnitTestSuite>& suites);

}  // namespace ropecheck
