// The human-readable output of `ropecheck verify` on stdout: one row per (subject, property),
// each FAILED row followed by its message, shrunk counterexample and __REPRO command; the kill
// matrix of a --mutants run; and the verdict line.
#pragma once

#include <iosfwd>

#include "properties/verify/kill_matrix.h"
#include "properties/verify/verify_plan.h"
#include "properties/verify/verify_run.h"
#include "properties/verify/verify_summary.h"

namespace ropecheck {

void print_results(const VerifyPlan& plan, const VerifyRun& run, std::ostream& out);
void print_kill_matrix(const KillMatrix& matrix, std::ostream& out);
void print_verdict(const VerifySummary& summary, bool mutants, std::ostream& out);

}  // namespace ropecheck
