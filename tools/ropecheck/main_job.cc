// run_main_job(): what `ropecheck` with no arguments does. For now the property suite with the
// mutants into reports/out/latest; the bench and the report join it as they are written.
#include "commands.h"
#include "logging.h"

namespace ropecheck {

int run_main_job(std::ostream& out, std::vector<std::string> command_line) {
  progress_log().info("main job: verify --mutants --out {}", kDefaultOutDir);
  VerifyOptions verify;
  verify.mutants = true;
  verify.out_dir = kDefaultOutDir;
  verify.command_line = std::move(command_line);
  return run_verify(verify, out);
}

}  // namespace ropecheck
