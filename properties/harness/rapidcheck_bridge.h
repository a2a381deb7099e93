// Runs one RapidCheck property with ropecheck's seed, case count and reproduce string, and turns
// RapidCheck's result (shrunk counterexample, reproduce string) into a PropertyResult.
#pragma once

#include <rapidcheck.h>

#include <cmath>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/errors.h"
#include "impls/rope_impl.h"
#include "properties/harness/call_record.h"
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
  std::vector<RecordedCall> last_failing_calls;  // the shrunk case's calls (call_record.h)

  void observe(double error, double bound_at_case) {
    worst.observe(error, bound_at_case);
    this_case.observe(error, bound_at_case);
  }
  void begin_case() {
    this_case = {};
    forget_calls();
  }
  void end_failing_case() {
    if (failing_cases++ == 0) first_failing = this_case;
    last_failing = this_case;
    last_failing_calls = recorded_calls();
  }
};

namespace detail {
rc::detail::TestParams test_params(const RunConfig& config);
std::unordered_map<std::string, rc::detail::Reproduce> reproduce_map(const RunConfig& config);
PropertyResult to_property_result(const rc::detail::TestResult& result, std::string_view key,
                                  const ErrorTracker& tracker);
// A PASSED result whose calls (guarded_apply.h) were all vacuous becomes MISTRUSTED.
void mistrust_if_vacuous(PropertyResult& result, const EvidenceCount& evidence);
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

// One case of a property: draws its inputs with `*gen`, calls, observes its errors with
// tracker.observe() and RC_ASSERTs its verdict (with the numbers in the message).
using CaseBody = std::function<void()>;
// One case of a RoPE property, given the subject's implementation, its capabilities and the
// property's error tracker.
using RopeCaseBody =
    std::function<void(const RopeImpl& impl, const RopeCapabilities& caps, ErrorTracker& tracker)>;

// Runs the property config.property_id (run_property() sets it) on `subject`: `testable` is one
// case; `units` names the error unit reported.
// `case_set` names a set of cases apart from the random ones ("@<model shape>"): it ends the
// RapidCheck key, so that a reproduce string says which set it replays.
// The case is passed as a std::function, not a template parameter: RapidCheck's checking and
// shrinking machinery is then compiled once (rapidcheck_bridge.cc) instead of once per property
// (the sanitizer build's batch of property files: 28 s -> 17 s).
PropertyResult check_property(const Subject& subject, const RunConfig& config,
                              std::string_view units, ErrorTracker& tracker,
                              const CaseBody& testable, std::string_view case_set = {});

// check_property() for a RoPE property: `body` runs each case. After the random cases, one case
// at each real model shape the subject runs (model_shape_cases.h), each its own RapidCheck key
// "<subject>/<property>@<shape>"; every call draws its thread count (guarded_apply.h) up to the
// run's --threads.
PropertyResult check_rope_property(const Subject& subject, const RunConfig& config,
                                   std::string_view units, const RopeCaseBody& body);

}  // namespace ropecheck
