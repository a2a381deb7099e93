// The gate's outputs for CI on known verdicts: JUnit XML valid against the schema CI systems read
// (tests/support/junit.xsd, checked with xmllint) with the right counts and elements, the same
// the markdown summary, and gate.json.
//   build/tests/gate_tests --gtest_filter='GateOutputs.*'
#include <gtest/gtest.h>

#include <string>

#include "core/junit_xml.h"
#include "core/result_files.h"
#include "gate/gate_json.h"
#include "gate/gate_junit.h"
#include "gate/gate_report.h"
#include "gate/gate_result.h"
#include "tests/support/test_process.h"

namespace ropecheck {
namespace {

using test::ScratchDir;
using test::contains;

std::size_t occurrences(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// xmllint's verdict on `xml` against the JUnit schema: "" when valid, else its complaint.
std::string schema_problems(const std::string& xml) {
  const ScratchDir dir("junit");
  const auto file = dir / "report.xml";
  write_text_file(xml, file);
  const auto r = test::spawn({"/usr/bin/xmllint", "--noout", "--schema",
                              ROPECHECK_JUNIT_XSD, file.string()});
  return r.code == 0 ? "" : r.err + r.out;
}

// A gate result with one case of each verdict, from known ratios.
GateResult known_result() {
  GateResult r;
  r.base = "old/ropecheck";
  r.current = "new/ropecheck";
  r.settings = {5, 0.05};
  r.repetitions = 3;
  r.cpu_model = "Test CPU";
  r.started = "2024-01-01T00:00:00Z";
  r.seconds = 12;
  const std::vector<CaseRounds> cases = {
      {"kernel/avx512/slow<&\"'>", {1.30, 1.31, 1.29, 1.30}, ""},
      {"kernel/avx512/same", {1.00, 1.01, 0.99, 1.00}, ""},
      {"kernel/avx512/noisy", {1.20, 0.85, 1.10, 0.95}, ""},
      {"kernel/avx512/l3", {1.0, 1.0, 1.01, 0.99}, "working set 32.0 MiB within 2x of the 32.0 MiB L3"},
  };
  r.judgement = judge_rounds(cases, r.settings);
  for (const auto& c : cases) {
    CaseSeries s;
    s.name = c.name;
    s.ratios = c.ratios;
    for (const double ratio : c.ratios) {
      s.base_time_ns.push_back(1000);
      s.current_time_ns.push_back(1000 * ratio);
    }
    r.series.push_back(s);
  }
  for (int i = 0; i < 4; ++i) r.rounds.push_back({i % 2 == 0, {}, {}, 3});
  return r;
}

TEST(GateOutputs, KnownResultHasOneVerdictOfEachKind) {
  const auto j = known_result().judgement;
  ASSERT_EQ(j.cases.size(), 4u);
  EXPECT_EQ(j.cases[0].verdict, GateVerdict::regression);
  EXPECT_EQ(j.cases[1].verdict, GateVerdict::pass);
  EXPECT_EQ(j.cases[2].verdict, GateVerdict::inconclusive);
  EXPECT_EQ(j.cases[3].verdict, GateVerdict::flagged);
}

TEST(GateOutputs, JUnitIsValidAndCountsTheVerdicts) {
  const std::string xml = gate_junit(known_result());
  EXPECT_EQ(schema_problems(xml), "") << xml;
  EXPECT_TRUE(contains(xml, "<testsuites tests=\"4\" failures=\"1\" errors=\"0\" skipped=\"2\"")) << xml;
  EXPECT_TRUE(contains(xml, "<testsuite name=\"ropecheck.gate\" tests=\"4\" failures=\"1\"")) << xml;
  EXPECT_EQ(occurrences(xml, "<testcase "), 4u);
  EXPECT_EQ(occurrences(xml, "<failure "), 1u);
  EXPECT_EQ(occurrences(xml, "<skipped "), 2u);
  // Special characters in a name are escaped, and the failure says what was measured.
  EXPECT_TRUE(contains(xml, "name=\"kernel/avx512/slow&lt;&amp;&quot;&apos;&gt;\"")) << xml;
  EXPECT_TRUE(contains(xml, "message=\"REGRESSION: change +30.0%")) << xml;
  EXPECT_TRUE(contains(xml, "message=\"INCONCLUSIVE: ")) << xml;
  EXPECT_TRUE(contains(xml, "message=\"flagged, not gated: working set")) << xml;
}

TEST(GateOutputs, JUnitWriterEscapesControlCharactersAndCountsEverySuite) {
  JUnitTestSuite a{"a", "", 1, {{"c", "x\x01y", 0.5, JUnitTestCase::Outcome::failure, "m\nn", "d<\n"}}};
  JUnitTestSuite b{"b", "2024-01-01T00:00:00", 2, {{"c", "ok", 0, JUnitTestCase::Outcome::passed, "", ""}}};
  const std::string xml = junit_xml({a, b});
  EXPECT_EQ(schema_problems(xml), "") << xml;
  EXPECT_TRUE(contains(xml, "name=\"x?y\"")) << xml;
  EXPECT_TRUE(contains(xml, "message=\"m&#10;n\"")) << xml;
  EXPECT_TRUE(contains(xml, "<testsuites tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"0\" time=\"3.000\"")) << xml;
}

TEST(GateOutputs, MarkdownSummaryHasTheVerdictTheCasesAndTheAdvice) {
  const std::string md = gate_markdown(known_result());
  EXPECT_TRUE(md.starts_with("### ❌ ropecheck gate: REGRESSION\n")) << md;
  EXPECT_TRUE(contains(md, "1 REGRESSION, 1 INCONCLUSIVE, 1 PASS of 3 gated case(s); 1 flagged")) << md;
  EXPECT_TRUE(contains(md, "| case | measure | change | interval | noise | detectable | verdict |")) << md;
  EXPECT_EQ(occurrences(md, "| `kernel/avx512/"), 4u) << md;
  EXPECT_TRUE(contains(md, "| **REGRESSION** |")) << md;
  EXPECT_TRUE(contains(md, "INCONCLUSIVE: needs ~")) << md;
  EXPECT_TRUE(contains(md, "or passes at --threshold")) << md;
  EXPECT_TRUE(contains(md, "Test CPU")) << md;
}

TEST(GateOutputs, GateJsonCarriesVerdictsRoundsAndBothMeasuresNoise) {
  const auto json = gate_json(known_result());
  EXPECT_EQ(json["schema"], "ropecheck.gate/4");
  EXPECT_TRUE(json["counted"].is_null());  // a timed gate: no counted half
  EXPECT_EQ(json["exit_code"], 1);
  EXPECT_EQ(json["cases"][0]["measure"], "time");
  EXPECT_TRUE(json["cases"][0]["pilot_spread_percent"]["limit"].is_null());  // no pilot rounds
  EXPECT_EQ(json["summary"]["exit_code"], 1);
  EXPECT_EQ(json["summary"]["flagged"], 1);
  EXPECT_EQ(json["rounds"].size(), 4u);
  EXPECT_EQ(json["cases"][0]["verdict"], "REGRESSION");
  EXPECT_EQ(json["cases"][2]["verdict"], "INCONCLUSIVE");
  EXPECT_TRUE(json["cases"][2]["rounds_needed"].is_number());
  EXPECT_EQ(json["cases"][3]["gated"], false);
  EXPECT_TRUE(json["cases"][0]["time_ratio_cv_percent"].is_number());
  EXPECT_TRUE(json["cases"][0]["limit_ratio_cv_percent"].is_null());  // no limit values given
}

}  // namespace
}  // namespace ropecheck
