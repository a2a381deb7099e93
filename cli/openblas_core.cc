// The re-run that sets OpenBLAS's core (openblas_core.h).
#include "cli/openblas_core.h"

#include <cblas.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/blas_core.h"
#include "core/errors.h"
#include "core/isa.h"

namespace ropecheck {

void run_openblas_at_the_kernels_level(char** argv) {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr) return;  // the user's choice, or this one's
  Isa level = Isa::scalar;
  try {
    level = dispatched_isa();
  } catch (const InvalidInput&) {
    return;  // a bad ROPECHECK_ISA: the command itself says so
  }
  const std::string detected = openblas_get_corename();
  const auto wanted = blas_core_for(level, detected);
  if (!wanted) return;
  setenv("OPENBLAS_CORETYPE", wanted->c_str(), 1);
  setenv(kOpenBlasDetectedCoreVariable, detected.c_str(), 1);
  execv("/proc/self/exe", argv);
  const int error = errno;  // still here: the new run did not start
  unsetenv("OPENBLAS_CORETYPE");
  unsetenv(kOpenBlasDetectedCoreVariable);
  spdlog::warn("OpenBLAS runs its {} core at the {} level; running again with OPENBLAS_CORETYPE={} failed ({}): "
               "sgemm and the attention timings stay on the {} core",
               detected, to_string(level), *wanted, std::strerror(error), detected);
}

}  // namespace ropecheck
