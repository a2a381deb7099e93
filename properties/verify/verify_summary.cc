// summarize(): counts and exit code of a verify run (the RESULT line and "summary" in
// verify.json).
#include "properties/verify/verify_summary.h"

#include "core/exit_codes.h"

namespace ropecheck {

VerifySummary summarize(const VerifyRun& run, const KillMatrix& matrix) {
  VerifySummary summary;
  for (const auto& subject : run.subjects) {
    for (const auto& result : subject.results) {
      switch (result.status) {
        case Status::passed: ++summary.passed; break;
        case Status::skipped: ++summary.skipped; break;
        case Status::mistrusted: ++summary.mistrusted; break;
        case Status::failed:
        case Status::hang:
          ++summary.failed;
          if (!subject.judged_as_mutant) ++summary.unexpected_failures;
          break;
      }
    }
  }
  for (const auto& row : matrix.mutants) {
    ++(row.killed() ? summary.mutants_killed : summary.mutants_survived);
  }
  summary.exit_code =
      summary.unexpected_failures == 0 && summary.mutants_survived == 0 ? kExitOk : kExitFailed;
  return summary;
}

}  // namespace ropecheck
