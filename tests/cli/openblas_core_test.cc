// The binary runs OpenBLAS with the vectors of its kernels' level (core/blas_core.h,
// cli/openblas_core.h): whatever core OpenBLAS detects on this CPU, the one `--version` reports
// has them, at every level this CPU runs (on a CPU OpenBLAS 0.3.21 does not know it detects
// Prescott, and ROPECHECK_ISA=avx2 on an AVX-512 CPU meets an AVX-512 core); an
// OPENBLAS_CORETYPE the user set is kept, whatever it lacks.
#include <gtest/gtest.h>

#include <string>

#include "core/blas_core.h"
#include "core/isa.h"
#include "tests/support/test_process.h"

namespace ropecheck {
namespace {

// The core named in `ropecheck --version` run with `env_args` (env(1) arguments), or "" if none.
std::string reported_core(const std::vector<std::string>& env_args) {
  std::vector<std::string> args = {"/usr/bin/env", "-u", "OPENBLAS_CORETYPE", "-u", kOpenBlasDetectedCoreVariable};
  args.insert(args.end(), env_args.begin(), env_args.end());
  args.insert(args.end(), {ROPECHECK_CLI_PATH, "--version"});
  const test::Exited run = test::spawn(args);
  EXPECT_EQ(run.code, 0) << run.err;
  const std::string marker = "OpenBLAS core ";
  const auto at = run.out.find(marker);
  if (at == std::string::npos) return "";
  const auto from = at + marker.size();
  return run.out.substr(from, run.out.find(')', from) - from);
}

TEST(CliOpenBlasCore, TheCoreRunsTheLevelsVectors) {
  for (const Isa level : built_levels()) {
    if (!cpu_supports(level)) continue;
    const std::string core = reported_core({"ROPECHECK_ISA=" + std::string(to_string(level))});
    ASSERT_FALSE(core.empty()) << to_string(level);
    EXPECT_EQ(blas_core_for(level, core), std::nullopt) << to_string(level) << ": OpenBLAS core " << core;
  }
}

#if defined(__x86_64__)  // OpenBLAS's x86 core names
TEST(CliOpenBlasCore, TheUsersChoiceIsKept) {
  if (!cpu_supports(Isa::avx2)) GTEST_SKIP() << "no AVX2 level here";
  EXPECT_EQ(reported_core({"ROPECHECK_ISA=avx2", "OPENBLAS_CORETYPE=Prescott"}), "Prescott");
}
#endif

}  // namespace
}  // namespace ropecheck
