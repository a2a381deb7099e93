// The `ropecheck` executable: everything lives in the ropecheck_cli library (commands.h).
//   ropecheck --help
#include "cli/cli_app.h"

int main(int argc, char** argv) { return ropecheck::run_cli(argc, argv); }
