// RapidCheck result -> PropertyResult.
#include "properties/harness/rapidcheck_bridge.h"

#include <fmt/format.h>

#include <sstream>

#include "core/errors.h"

namespace rc::detail {
// Exported by librapidcheck (src/detail/ReproduceListener / Serialization) but not declared in
// its public headers; these are the functions RapidCheck itself uses for RC_PARAMS="reproduce=".
std::string reproduceMapToString(const std::unordered_map<std::string, Reproduce>& map);
std::unordered_map<std::string, Reproduce> stringToReproduceMap(const std::string& str);
}  // namespace rc::detail

namespace ropecheck::detail {
namespace {

// RapidCheck describes an RC_FAIL as "<file>:<line>:\n<the macro call>\n\n<message>". Keep the
// message and a short "(file.cc:line)" reference; the macro's source text is noise to a reader.
std::string without_assertion_source(const std::string& description) {
  const auto first_line_end = description.find(":\n");
  const auto message_start = description.find("\n\n");
  if (first_line_end == std::string::npos || message_start == std::string::npos ||
      first_line_end > message_start) {
    return description;
  }
  std::string where = description.substr(0, first_line_end);
  if (const auto slash = where.rfind('/'); slash != std::string::npos) where = where.substr(slash + 1);
  return description.substr(message_start + 2) + " (" + where + ")";
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
    std::ostringstream example;
    for (const auto& [type, value] : failure.counterExample) example << type << ": " << value << "\n";
    out.counterexample = example.str();
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
      if (runs_model_shape(subject.id, shape) && shape.head_dim <= caps.max_head_dim) {
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
