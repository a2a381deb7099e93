// Executes a VerifyPlan: every planned (subject, property) pair through run_property(), with one
// progress line per subject on stderr (or per few: VerifyOptions::progress_lines). A property that
// throws is a FAILED result, not a crash.
#pragma once

#include <string>
#include <vector>

#include "properties/property.h"
#include "properties/verify/verify_plan.h"

namespace ropecheck {

struct SubjectResults {
  Subject subject;
  bool judged_as_mutant = false;  // must be killed rather than pass (see judged_as_mutant())
  std::vector<PropertyResult> results;  // one per planned property, in plan order
};

struct VerifyRun {
  std::string timestamp;  // UTC, ISO 8601, when the run started
  double seconds = 0.0;
  std::vector<SubjectResults> subjects;
};

// Throws InvalidInput when a property reports bad input (the CLI's exit 2); any other exception
// from a property becomes that pair's FAILED result and the run goes on. With processes > 1 the
// subjects run in that many forked workers (verify_processes.h), with the same results.
VerifyRun execute_plan(const VerifyPlan& plan, int processes = 1);

// One job of the plan, plan.jobs[index]: its progress line, then each planned property through
// run_property_guarded(), in plan order.
std::vector<PropertyResult> run_job(const VerifyPlan& plan, std::size_t index);

// run_property() with every exception but InvalidInput turned into a FAILED result.
PropertyResult run_property_guarded(const Property& property, const Subject& subject,
                                    const RunConfig& config);

}  // namespace ropecheck
