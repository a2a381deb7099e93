// The `ropecheck` executable: everything lives in the ropecheck_cli library (commands.h).
//   ropecheck --help
#include "cli/cli_app.h"
#include "cli/openblas_core.h"

int main(int argc, char** argv) {
  ropecheck::run_openblas_at_the_kernels_level(argv);  // may run the program again, OpenBLAS set
  return ropecheck::run_cli(argc, argv);
}
