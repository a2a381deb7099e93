// OpenBLAS's core set to the kernels' level (core/blas_core.h) for the whole process. OpenBLAS
// reads OPENBLAS_CORETYPE once, as the library loads, before main: the one way to change its core
// is to run the program again with the variable set.
#pragma once

namespace ropecheck {

// Where OpenBLAS chose a core without the level's vectors and OPENBLAS_CORETYPE is unset: sets it
// (and kOpenBlasDetectedCoreVariable to OpenBLAS's own choice) and replaces the process with a
// new run of the same program and arguments; children (the gate's bench processes, plugin
// workers) inherit the setting. Returns where there is nothing to change, and where the new run
// could not start (a warning; the process goes on with OpenBLAS's choice). Call first in main.
void run_openblas_at_the_kernels_level(char** argv);

}  // namespace ropecheck
