// Runs one RapidCheck property with ropecheck's seed, case count and reproduce string, and turns
// RapidCheck's result (shrunk counterexample, reproduce string) into a PropertyResult.
#pragma once

#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/errors.h"
#include "plugins/host/plugin_host.h"
#include "properties/harness/guarded_apply.h"
#include "properties/harness/model_shape_cases.h"
#include "properties/property.h"

namespace ropecheck {

// One error against its bound: the worst of a case, or of a run.
struct Observed {
  double ratio = 0.0;
  double error = 0.0;
  double bound = 0.0;
  bool any = false;

  // Keeps the larger error / bound (the first while all errors are 0, so that a report shows the
  // bound the zeros were held to).
  void observe(double error_now, double bound_now) {
    double r = bound_now > 0 ? error_now / bound_now : (error_now > 0 ? INFINITY : 0.0);
    if (std::isnan(r)) r = INFINITY;
    if (!any || r > ratio) *this = {r, error_now, bound_now, true};
  }
};

// The errors a property observed: over every case it ran, in the case running now, and in its
// first and last failing cases. RapidCheck shrinks by running smaller cases until none fails,
// so the last failing case is the shrunk counterexample the message shows: a failed property
// reports that case's numbers and names the first failing case's beside them.
struct ErrorTracker {
  Observed worst, this_case, first_failing, last_failing;
  int failing_cases = 0;

  void observe(double error, double bound_at_case) {
    worst.observe(error, bound_at_case);
    this_case.observe(error, bound_at_case);
  }
  void begin_case() { this_case = {}; }
  void end_failing_case() {
    if (failing_cases++ == 0) first_failing = this_case;
    last_failing = this_case;
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
// `case_set` names a set of cases apart from the random ones ("@<model shape>"): it ends the
// RapidCheck key, so that a reproduce string says which set it replays.
template <typename Testable>
PropertyResult check_property(const Subject& subject, const RunConfig& config,
                              std::string_view units, ErrorTracker& tracker, Testable&& testable,
                              std::string_view case_set = {}) {
  if (config.property_id.empty()) {
    throw std::logic_error("check_property: no property id (run properties through run_property)");
  }
  rc::detail::TestMetadata metadata;
  metadata.id = subject.id + "/" + config.property_id + std::string(case_set);
  metadata.description = metadata.id;
  struct QuietListener : rc::detail::TestListener {
    void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
    void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
    void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
  } listener;
  // A case the implementation declines (UnsupportedCase: a plugin's UNSUPPORTED) is discarded,
  // neither passed nor failed; the property is then SKIPPED naming the first such case.
  std::string unsupported;
  // A call that hung (PluginHang, after its watchdog) fails its case; every later case, which
  // is shrinking's, is discarded without a call, so that the hung case is reported as found,
  // after one watchdog period rather than one per shrinking step.
  std::string hang;
  auto declining = [&unsupported, &hang, &testable, &tracker] {
    if (!hang.empty()) RC_DISCARD("a call hung: no more calls for this property");
    tracker.begin_case();
    try {
      testable();
    } catch (const UnsupportedCase& e) {
      if (unsupported.empty()) unsupported = e.what();
      RC_DISCARD(e.what());
    } catch (const PluginHang& e) {
      hang = e.what();
      tracker.end_failing_case();
      throw;
    } catch (const rc::detail::CaseResult& result) {  // RC_ASSERT, RC_FAIL, RC_DISCARD, RC_SUCCEED
      if (result.type == rc::detail::CaseResult::Type::Failure) tracker.end_failing_case();
      throw;
    } catch (...) {  // anything else thrown fails the case too
      tracker.end_failing_case();
      throw;
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
  if (!hang.empty()) {
    out.status = Status::hang;
    out.message = hang + " (the case that hung, not shrunk: shrinking makes no call after a hang)";
  }
  detail::mistrust_if_vacuous(out, evidence());
  out.subject = subject.id;
  out.property = config.property_id;
  out.units = std::string(units);
  return out;
}

namespace detail {
// The model shapes a RoPE subject runs (core/model_shapes.h): those runs_model_shape() gives its
// id, within its max_head_dim, of config.model_shapes' set (all, up to 512 tokens, none).
std::vector<const ModelShape*> model_shapes_for(const Subject& subject, const RopeCapabilities& caps,
                                                const RunConfig& config);
// Replaying (config.reproduce): the shape whose case set the string's key names, nullptr for the
// random cases; `replaying` says whether a string was given at all.
const ModelShape* replayed_model_shape(const RunConfig& config, bool& replaying);
// "at model shape <name> (<its sizes>): <message>".
std::string at_model_shape(const ModelShape& shape, std::string_view message);
// Folds a model shape's result into the property's: a failure (or hang) at the shape becomes the
// property's verdict, named with the shape; a pass adds its case.
void fold_model_shape_result(PropertyResult& into, PropertyResult at_shape, const ModelShape& shape);
}  // namespace detail

// check_property() for a RoPE property: `body(impl, caps, tracker)` runs each case, with the
// subject's implementation, its capabilities and the property's error tracker. After the random
// cases, one case at each real model shape the subject runs (model_shape_cases.h), each its own
// RapidCheck key "<subject>/<property>@<shape>"; every call draws its thread count
// (guarded_apply.h) up to the run's --threads.
template <typename Body>
PropertyResult check_rope_property(const Subject& subject, const RunConfig& config,
                                   std::string_view units, Body&& body) {
  ErrorTracker tracker;
  const RopeImpl& impl = *subject.rope;
  const RopeCapabilities caps = impl.capabilities();
  set_call_threads_limit(std::min(caps.max_threads, config.threads));
  struct OneThreadAfter {  // a call outside a property draws nothing: back to 1 when done
    ~OneThreadAfter() { set_call_threads_limit(1); }
  } one_thread_after;
  const auto run = [&](const RunConfig& c, std::string_view case_set) {
    return check_property(subject, c, units, tracker, [&] { body(impl, caps, tracker); }, case_set);
  };
  const auto at_shape = [&](const ModelShape& shape) {
    RunConfig once = config;
    once.cases = 1;
    const ModelShapeInForce in_force(shape);
    return run(once, std::string("@") + shape.name);
  };
  bool replaying = false;
  if (const ModelShape* shape = detail::replayed_model_shape(config, replaying)) {
    PropertyResult result = at_shape(*shape);
    if (failing(result.status)) result.message = detail::at_model_shape(*shape, result.message);
    return result;
  }
  PropertyResult result = run(config, {});
  if (replaying || result.status != Status::passed) return result;
  for (const ModelShape* shape : detail::model_shapes_for(subject, caps, config)) {
    detail::fold_model_shape_result(result, at_shape(*shape), *shape);
    if (result.status != Status::passed) break;
  }
  return result;
}

}  // namespace ropecheck
