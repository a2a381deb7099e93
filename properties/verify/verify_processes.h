// The verify loop spread over forked worker processes (`verify --jobs N`). Processes, not threads:
// RapidCheck's runner keeps global state. Every (subject, property) check is seeded on its own, so
// a result does not depend on which process ran it, or when; the results come back in plan order.
#pragma once

#include <vector>

#include "properties/property.h"
#include "properties/verify/verify_plan.h"

namespace ropecheck {

// Runs every job of the plan with `processes` > 1 workers forked from this process; returns each
// job's results (one per planned property), in plan order. A subject whose implementation runs in
// another process already (a plugin: this process owns its worker) runs here, between the
// workers' replies. A worker that dies fails the subject it was running (FAILED, naming the
// signal) and the rest go on. Throws InvalidInput as run_job() does, after stopping the workers.
std::vector<std::vector<PropertyResult>> run_jobs_in_processes(const VerifyPlan& plan, int processes);

}  // namespace ropecheck
