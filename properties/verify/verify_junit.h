// `ropecheck verify --junit FILE`: the run as JUnit XML (core/junit_xml.h) for CI test-report
// views. Suite "ropecheck.verify": one testcase per (property, implementation), FAILED a failure,
// SKIPPED skipped. With --mutants, suite "ropecheck.mutants": one testcase per mutant, a failure
// when it survived (no property caught it).
#pragma once

#include <string>

#include "properties/verify/kill_matrix.h"
#include "properties/verify/verify_run.h"

namespace ropecheck {

std::string verify_junit(const VerifyRun& run, const KillMatrix& matrix);

}  // namespace ropecheck
