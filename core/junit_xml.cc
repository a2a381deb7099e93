// junit_xml() (junit_xml.h). Written by hand: no XML library is among the project's dependencies,
// and what is written is a fixed handful of elements whose text and attributes are escaped here.
// tests/gate/junit_test.cc validates the output against a JUnit XSD.
#include "core/junit_xml.h"

#include <fmt/format.h>

#include <cstddef>

namespace ropecheck {
namespace {

// Escaped for an attribute value or element text. Control characters other than tab, newline and
// carriage return are not allowed in XML 1.0 at all, escaped or not.
std::string escaped(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    const auto u = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\n': out += "&#10;"; break;
      case '\r': out += "&#13;"; break;
      case '\t': out += "&#9;"; break;
      default: out += u < 0x20 || u == 0x7f ? '?' : ch;
    }
  }
  return out;
}

// Element text keeps its line breaks literal (readable in the CI's log view).
std::string escaped_text(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    if (ch == '\n') {
      out += '\n';
    } else {
      out += escaped(std::string(1, ch));
    }
  }
  return out;
}

struct Counts {
  std::size_t tests = 0, failures = 0, skipped = 0;
  double seconds = 0;
};

std::string counts_attributes(const Counts& c) {
  return fmt::format("tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{:.3f}\"",
                     c.tests, c.failures, c.skipped, c.seconds);
}

Counts count(const JUnitTestSuite& suite) {
  Counts c;
  c.seconds = suite.seconds;
  for (const auto& t : suite.cases) {
    ++c.tests;
    if (t.outcome == JUnitTestCase::Outcome::failure) ++c.failures;
    if (t.outcome == JUnitTestCase::Outcome::skipped) ++c.skipped;
  }
  return c;
}

}  // namespace

std::string junit_xml(const std::vector<JUnitTestSuite>& suites) {
  Counts total;
  std::string body;
  for (const auto& suite : suites) {
    const Counts c = count(suite);
    total.tests += c.tests;
    total.failures += c.failures;
    total.skipped += c.skipped;
    total.seconds += c.seconds;
    body += fmt::format("  <testsuite name=\"{}\" {}", escaped(suite.name), counts_attributes(c));
    if (!suite.timestamp.empty()) body += fmt::format(" timestamp=\"{}\"", escaped(suite.timestamp));
    body += ">\n";
    for (const auto& t : suite.cases) {
      body += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\"",
                          escaped(t.classname), escaped(t.name), t.seconds);
      switch (t.outcome) {
        case JUnitTestCase::Outcome::passed:
          body += "/>\n";
          break;
        case JUnitTestCase::Outcome::failure:
          body += fmt::format(">\n      <failure message=\"{}\" type=\"failure\">{}</failure>\n"
                              "    </testcase>\n",
                              escaped(t.message), escaped_text(t.details));
          break;
        case JUnitTestCase::Outcome::skipped:
          body += fmt::format(">\n      <skipped message=\"{}\"/>\n    </testcase>\n",
                              escaped(t.message));
          break;
      }
    }
    body += "  </testsuite>\n";
  }
  return fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites {}>\n{}</testsuites>\n",
                     counts_attributes(total), body);
}

}  // namespace ropecheck
