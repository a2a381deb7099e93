// RapidCheck result -> PropertyResult.
#include "properties/harness/rapidcheck_bridge.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "core/errors.h"
#include "plugins/host/plugin_host.h"
#include "properties/harness/guarded_apply.h"
#include "properties/harness/model_shape_cases.h"

namespace rc::detail {
// Exported by librapidcheck (src/detail/ReproduceListener / Serialization) but not declared in
// its public headers; these are the functions RapidCheck itself uses for RC_PARAMS="reproduce=".
std::string reproduceMapToString(const std::unordered_map<std::string, Reproduce>& map);
std::unordered_map<std::string, Reproduce> stringToReproduceMap(const std::string& str);
}  // namespace rc::detail

namespace ropecheck::detail {
namespace {

// RapidCheck describes an RC_FAIL as "<file>:<line>:\n<the macro call>\n\n<message>". Keep the
// message alone: the macro's source text and a line of ropecheck's sources mean nothing to a
// porter, who has neither (the message names what was compared).
std::string without_assertion_source(const std::string& description) {
  const auto first_line_end = description.find(":\n");
  const auto message_start = description.find("\n\n");
  if (first_line_end == std::string::npos || message_start == std::string::npos ||
      first_line_end > message_start) {
    return description;
  }
  return description.substr(message_start + 2);
}

// RapidCheck's counterexample, one "name: value" line per value the case drew, in order, under
// the calls the case made (call_record.h): what a porter needs to make the same call.
std::string counterexample_text(const std::vector<RecordedCall>& calls,
                                const rc::detail::Example& drawn) {
  std::string text = describe_calls(calls);
  if (!drawn.empty()) {
    text += calls.empty() ? "values drawn:\n" : "values the case drew:\n";
    for (const auto& [name, value] : drawn) text += "  " + name + ": " + value + "\n";
  }
  return text;
}

}  // namespace

rc::detail::TestParams test_params(const RunConfig& config) {
  rc::detail::TestParams params;
  params.seed = config.seed;
  params.maxSuccess = config.cases;
  params.maxSize = 100;
  params.maxDiscardRatio = 10;
  params.disableShrinking = !config.shrink;
  return params;
}

void mistrust_if_vacuous(PropertyResult& result, const EvidenceCount& evidence) {
  if (result.status != Status::passed || evidence.calls == 0 || evidence.informative > 0) return;
  result.status = Status::mistrusted;
  result.message = fmt::format("passed, but none of its {} calls could show a bug (first: {})",
                               evidence.calls, evidence.first_vacuous);
}

std::unordered_map<std::string, rc::detail::Reproduce> reproduce_map(const RunConfig& config) {
  if (config.reproduce.empty()) return {};
  try {
    return rc::detail::stringToReproduceMap(config.reproduce);
  } catch (const std::exception& e) {
    throw InvalidInput(fmt::format("cannot parse reproduce string '{}': {}", config.reproduce,
                                   e.what()));
  }
}

PropertyResult to_property_result(const rc::detail::TestResult& result, std::string_view key,
                                  const ErrorTracker& tracker) {
  PropertyResult out;
  out.worst_ratio = tracker.worst.ratio;
  out.worst_error = tracker.worst.error;
  out.bound = tracker.worst.bound;
  if (result.is<rc::detail::SuccessResult>()) {
    out.status = Status::passed;
    out.cases = result.get<rc::detail::SuccessResult>().numSuccess;
  } else if (result.is<rc::detail::FailureResult>()) {
    const auto& failure = result.get<rc::detail::FailureResult>();
    out.status = Status::failed;
    out.cases = failure.numSuccess;
    out.message = without_assertion_source(failure.description);
    // The row's numbers are the shrunk counterexample's, the one the message describes; the
    // first failing case (before shrinking) is named beside them when it differs.
    const Observed& shrunk = tracker.last_failing;
    if (shrunk.any) {
      out.worst_ratio = shrunk.ratio;
      out.worst_error = shrunk.error;
      out.bound = shrunk.bound;
      const Observed& first = tracker.first_failing;
      if (first.any && tracker.failing_cases > 1 && first.ratio != shrunk.ratio) {
        out.message += fmt::format("\n(worst/bound {:.3g} in the shrunk case above; {:.3g} in the "
                                   "first failing case, before shrinking)",
                                   shrunk.ratio, first.ratio);
      }
    }
    out.counterexample = counterexample_text(tracker.last_failing_calls, failure.counterExample);
    out.reproduce = rc::detail::reproduceMapToString({{std::string(key), failure.reproduce}});
  } else if (result.is<rc::detail::GaveUpResult>()) {
    // Giving up means the generators could not produce valid cases: a harness bug, a failure.
    const auto& gave_up = result.get<rc::detail::GaveUpResult>();
    out.status = Status::failed;
    out.cases = gave_up.numSuccess;
    out.message = "RapidCheck gave up: " + gave_up.description;
  } else {
    out.status = Status::failed;
    out.message = "RapidCheck error: " + result.get<rc::detail::Error>().description;
  }
  return out;
}

std::vector<const ModelShape*> model_shapes_for(const Subject& subject, const RopeCapabilities& caps,
                                                const RunConfig& config) {
  std::vector<const ModelShape*> shapes;
  if (config.model_shapes == ModelShapeSet::none) return shapes;
  for (const auto table : kModelShapeTables) {
    for (const ModelShape& shape : table) {
      if (config.model_shapes == ModelShapeSet::short_calls && shape.tokens > 512) continue;
      if (!shape.verified) continue;
      if (runs_model_shape(subject.id, shape) && shape.head_dim <= caps.max_head_dim &&
          caps.implements(shape.axes.mode)) {
        shapes.push_back(&shape);
      }
    }
  }
  return shapes;
}

const ModelShape* replayed_model_shape(const RunConfig& config, bool& replaying) {
  replaying = !config.reproduce.empty();
  if (!replaying) return nullptr;
  for (const auto& [key, unused] : reproduce_map(config)) {
    const auto at = key.rfind('@');
    if (at == std::string::npos) continue;
    const std::string_view name = std::string_view(key).substr(at + 1);
    if (const ModelShape* shape = find_model_shape(name)) return shape;
    throw InvalidInput(fmt::format("reproduce string names model shape '{}', which this build "
                                   "does not have", name));
  }
  return nullptr;
}

std::string at_model_shape(const ModelShape& shape, std::string_view message) {
  return fmt::format("at model shape {} ({} tokens x {} q / {} kv heads x {}): {}", shape.name,
                     shape.tokens, shape.q_heads, shape.k_heads, shape.head_dim, message);
}

void fold_model_shape_result(PropertyResult& into, PropertyResult at_shape, const ModelShape& shape) {
  if (failing(at_shape.status)) {
    at_shape.message = at_model_shape(shape, at_shape.message);
    at_shape.cases += into.cases;
    into = std::move(at_shape);
    return;
  }
  // Passed, skipped (declined) or vacuous: the verdict stays; the tracker's worst is cumulative.
  into.cases += at_shape.status == Status::passed ? at_shape.cases : 0;
  into.worst_ratio = at_shape.worst_ratio;
  into.worst_error = at_shape.worst_error;
  into.bound = at_shape.bound;
}

}  // namespace ropecheck::detail

namespace ropecheck {

PropertyResult check_property(const Subject& subject, const RunConfig& config,
                              std::string_view units, ErrorTracker& tracker,
                              const CaseBody& testable, std::string_view case_set) {
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
  if (!unsupported.empty() && !result.is<rc::detail::FailureResult>()) {
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

PropertyResult check_rope_property(const Subject& subject, const RunConfig& config,
                                   std::string_view units, const RopeCaseBody& body) {
  ErrorTracker tracker;
  const RopeImpl& impl = *subject.rope;
  const RopeCapabilities caps = impl.capabilities();
  const CallThreadsInForce threads(std::min(caps.max_threads, config.threads));
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
  const auto shapes = detail::model_shapes_for(subject, caps, config);
  if (!shapes.empty()) keep_large_blocks_mapped();
  for (const ModelShape* shape : shapes) {
    detail::fold_model_shape_result(result, at_shape(*shape), *shape);
    if (result.status != Status::passed) break;
  }
  return result;
}

}  // namespace ropecheck
