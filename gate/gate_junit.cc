// gate_junit() (gate_junit.h).
#include "gate/gate_junit.h"

#include <fmt/format.h>

#include "core/junit_xml.h"
#include "gate/counted_report.h"
#include "gate/gate_report.h"

namespace ropecheck {

std::string gate_junit(const GateResult& r) {
  JUnitTestSuite suite;
  suite.name = "ropecheck.gate";
  suite.timestamp = r.started;
  suite.seconds = r.seconds;
  const double per_case = r.judgement.cases.empty() ? 0 : r.seconds / static_cast<double>(r.judgement.cases.size());
  for (std::size_t i = 0; i < r.judgement.cases.size(); ++i) {
    const auto& v = r.judgement.cases[i];
    JUnitTestCase t;
    t.classname = "ropecheck.gate";
    t.name = v.name;
    t.seconds = per_case;
    const std::string measured = fmt::format(
        "change {:+.1f}%, interval [{:+.1f}%, {:+.1f}%], threshold {}%, noise {:.1f}%, {} rounds of {}",
        100 * (v.ratio - 1), 100 * (v.ratio_low - 1), 100 * (v.ratio_high - 1),
        r.settings.threshold_percent, v.noise_percent, v.rounds, to_string(r.series[i].measure));
    switch (v.verdict) {
      case GateVerdict::pass:
        break;
      case GateVerdict::regression:
        t.outcome = JUnitTestCase::Outcome::failure;
        t.message = "REGRESSION: " + measured;
        t.details = fmt::format("{}\nbase: {}\ncurrent: {}\n", t.message, r.base, r.current);
        break;
      case GateVerdict::inconclusive:
        t.outcome = JUnitTestCase::Outcome::skipped;
        t.message = fmt::format("INCONCLUSIVE: {}; {}", measured, resolve_advice(v));
        break;
      case GateVerdict::flagged:
        t.outcome = JUnitTestCase::Outcome::skipped;
        t.message = fmt::format("flagged, not gated: {}; {}", v.flagged, measured);
        break;
    }
    suite.cases.push_back(std::move(t));
  }
  for (auto& t : counted_junit_cases(r.counted)) suite.cases.push_back(std::move(t));
  return junit_xml({suite});
}

}  // namespace ropecheck
