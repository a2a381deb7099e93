// Runs one RapidCheck property with ropecheck's seed, case count and reproduce string, and turns
// RapidCheck's result (shrunk counterexample, reproduce string) into a PropertyResult.
#pragma once

#include <rapidcheck.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <string_view>

#include "properties/harness/guarded_apply.h"
#include "properties/property.h"
#include "core/errors.h"

namespace ropecheck {

// The worst observed error against its bound over every case a property runs.
struct ErrorTracker {
  double worst_ratio = 0.0;
  double worst_error = 0.0;
  double bound = 0.0;
  bool observed = false;

  // Keeps the case with the largest error / bound (the first case while all errors are 0, so
  // that a report shows the bound the zeros were held to).
  void observe(double error, double bound_at_case) {
    double ratio = bound_at_case > 0 ? error / bound_at_case : (error > 0 ? INFINITY : 0.0);
    if (std::isnan(ratio)) ratio = INFINITY;
    if (!observed || ratio > worst_ratio) {
      observed = true;
      worst_ratio = ratio;
      worst_error = error;
      bound = bound_at_case;
    }
  }
};

namespace detail {
rc::detail::TestParams test_params(const RunConfig& config);
std::unordered_map<std::string, rc::detail::Reproduce> reproduce_map(const RunConfig& config);
PropertyResult to_property_result(const rc::detail::TestResult& result, std::string_view key,
                                  const ErrorTracker& tracker);
// A PASSED result whose calls (guarded_apply.h) were all vacuous becomes MISTRUSTED.
void mistrust_if_vacuous(PropertyResult& result, const EvidenceCount& evidence);
}  // namespace detail

// Runs the property config.property_id (run_property() sets it) on `subject`. `units` names the
// error unit reported; the property's lambda calls tracker.observe() per case and RC_ASSERTs its
// verdict (with the numbers in the message).
template <typename Testable>
PropertyResult check_property(const Subject& subject, const RunConfig& config,
                              std::string_view units, ErrorTracker& tracker, Testable&& testable) {
  if (config.property_id.empty()) {
    throw std::logic_error("check_property: no property id (run properties through run_property)");
  }
  rc::detail::TestMetadata metadata;
  metadata.id = subject.id + "/" + config.property_id;
  metadata.description = metadata.id;
  struct QuietListener : rc::detail::TestListener {
    void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
    void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
    void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
  } listener;
  // A case the implementation declines (UnsupportedCase: a plugin's UNSUPPORTED) is discarded,
  // neither passed nor failed; the property is then SKIPPED naming the first such case.
  std::string unsupported;
  auto declining = [&unsupported, &testable] {
    try {
      testable();
    } catch (const UnsupportedCase& e) {
      if (unsupported.empty()) unsupported = e.what();
      RC_DISCARD(e.what());
    }
  };
  reset_evidence();
  const auto result = rc::detail::checkTestable(declining, metadata, detail::test_params(config),
                                                listener, detail::reproduce_map(config));
  auto out = detail::to_property_result(result, metadata.id, tracker);
  if (!unsupported.empty() && !result.template is<rc::detail::FailureResult>()) {
    out.status = Status::skipped;
    out.message = unsupported;
  }
  detail::mistrust_if_vacuous(out, evidence());
  out.subject = subject.id;
  out.property = config.property_id;
  out.units = std::string(units);
  return out;
}

// check_property() for a RoPE property: `body(impl, caps, tracker)` runs each case, with the
// subject's implementation, its capabilities and the property's error tracker.
template <typename Body>
PropertyResult check_rope_property(const Subject& subject, const RunConfig& config,
                                   std::string_view units, Body&& body) {
  ErrorTracker tracker;
  const RopeImpl& impl = *subject.rope;
  const RopeCapabilities caps = impl.capabilities();
  return check_property(subject, config, units, tracker, [&] { body(impl, caps, tracker); });
}

}  // namespace ropecheck
