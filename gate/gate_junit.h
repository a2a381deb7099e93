// The gate as JUnit XML (core/junit_xml.h) for CI test-report views: one testcase per judged case
// in suite "ropecheck.gate"; REGRESSION is a failure, INCONCLUSIVE and flagged cases are skipped
// with the reason (the exit code, 3, is what fails a job on INCONCLUSIVE when a CI asks for it).
#pragma once

#include <string>

#include "gate/gate_result.h"

namespace ropecheck {

std::string gate_junit(const GateResult& result);

}  // namespace ropecheck
