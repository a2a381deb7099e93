// execute_plan(): the verify loop, in this process or spread over worker processes
// (verify_processes.cc: RapidCheck's runner is single-threaded, and a result must not depend on
// scheduling, which each check's own seed ensures).
#include "properties/verify/verify_run.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <ctime>

#include "core/logging.h"
#include "core/errors.h"
#include "properties/verify/verify_processes.h"

namespace ropecheck {
namespace {

std::string utc_timestamp(std::chrono::system_clock::time_point when) {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}",
                     fmt::gmtime(std::chrono::system_clock::to_time_t(when)));
}

PropertyResult failed_by_exception(const Property& property, const Subject& subject,
                                   std::string message) {
  PropertyResult result;
  result.subject = subject.id;
  result.property = std::string(property.id);
  result.status = Status::failed;
  result.message = std::move(message);
  return result;
}

}  // namespace

PropertyResult run_property_guarded(const Property& property, const Subject& subject,
                                    const RunConfig& config) {
  const auto start = std::chrono::steady_clock::now();
  PropertyResult result;
  try {
    result = run_property(property, subject, config);
  } catch (const InvalidInput&) {
    throw;  // bad input (e.g. a reproduce string RapidCheck rejects): the caller's exit 2
  } catch (const std::exception& e) {
    result = failed_by_exception(property, subject,
                                 fmt::format("unexpected exception outside a test case: {}",
                                             e.what()));
  } catch (...) {
    result = failed_by_exception(property, subject,
                                 "unexpected non-standard exception outside a test case");
  }
  // A property may leave the ids to its caller; the table and the kill matrix need them.
  if (result.subject.empty()) result.subject = subject.id;
  if (result.property.empty()) result.property = std::string(property.id);
  if (result.seconds == 0.0) {
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return result;
}

std::vector<PropertyResult> run_job(const VerifyPlan& plan, std::size_t index) {
  const auto& job = plan.jobs.at(index);
  if ((index + 1) % plan.progress_every == 0 || index + 1 == plan.jobs.size()) {
    progress_log().info("[{}/{}] {}{}: {} propert{}", index + 1, plan.jobs.size(), job.subject.id,
                        job.subject.mutant ? " (mutant)" : "", job.properties.size(),
                        job.properties.size() == 1 ? "y" : "ies");
  }
  std::vector<PropertyResult> results;
  for (const Property* property : job.properties) {
    results.push_back(run_property_guarded(*property, job.subject, plan.config));
  }
  return results;
}

VerifyRun execute_plan(const VerifyPlan& plan, int processes) {
  VerifyRun run;
  const auto wall_start = std::chrono::system_clock::now();
  const auto start = std::chrono::steady_clock::now();
  run.timestamp = utc_timestamp(wall_start);
  std::vector<std::vector<PropertyResult>> results;
  if (processes > 1 && plan.jobs.size() > 1) {
    results = run_jobs_in_processes(plan, processes);
  } else {
    for (std::size_t i = 0; i < plan.jobs.size(); ++i) results.push_back(run_job(plan, i));
  }
  for (std::size_t i = 0; i < plan.jobs.size(); ++i) {
    const Subject& subject = plan.jobs[i].subject;
    run.subjects.push_back({subject, judged_as_mutant(plan, subject), std::move(results[i])});
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

}  // namespace ropecheck
