// verify_junit() (verify_junit.h).
#include "properties/verify/verify_junit.h"

#include <fmt/format.h>

#include "core/junit_xml.h"

namespace ropecheck {
namespace {

JUnitTestCase property_case(const PropertyResult& r) {
  JUnitTestCase t;
  t.classname = "ropecheck.verify." + r.subject;
  t.name = r.property;
  t.seconds = r.seconds;
  if (failing(r.status)) {
    t.outcome = JUnitTestCase::Outcome::failure;
    t.message = r.status == Status::hang ? "HANG: " + r.message : r.message;
    t.details = r.message;
    if (!r.counterexample.empty()) t.details += "\ncounterexample: " + r.counterexample;
    if (!r.reproduce.empty()) {
      t.details += fmt::format("\nreplay: ropecheck verify --impl {} --property {} --reproduce {}",
                               r.subject, r.property, r.reproduce);
    }
  } else if (r.status == Status::skipped) {
    t.outcome = JUnitTestCase::Outcome::skipped;
    t.message = r.message;
  } else if (r.status == Status::mistrusted) {
    // Passed while proving nothing: shown as skipped, so a CI does not count it as a pass.
    t.outcome = JUnitTestCase::Outcome::skipped;
    t.message = "MISTRUSTED: " + r.message;
  }
  return t;
}

}  // namespace

std::string verify_junit(const VerifyRun& run, const KillMatrix& matrix) {
  JUnitTestSuite properties{"ropecheck.verify", run.timestamp, run.seconds, {}};
  JUnitTestSuite mutants{"ropecheck.mutants", run.timestamp, 0, {}};
  for (const auto& subject : run.subjects) {
    if (subject.judged_as_mutant) continue;  // judged by the kill matrix below
    for (const auto& r : subject.results) properties.cases.push_back(property_case(r));
  }
  for (const auto& row : matrix.mutants) {
    JUnitTestCase t;
    t.classname = "ropecheck.mutants";
    t.name = row.mutant;
    if (!row.killed()) {
      t.outcome = JUnitTestCase::Outcome::failure;
      t.message = fmt::format("mutant survived: none of the {} properties run on it failed", row.ran);
      t.details = t.message;
    }
    mutants.cases.push_back(std::move(t));
  }
  std::vector<JUnitTestSuite> suites = {std::move(properties)};
  if (!mutants.cases.empty()) suites.push_back(std::move(mutants));
  return junit_xml(suites);
}

}  // namespace ropecheck
