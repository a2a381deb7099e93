// Which of OpenBLAS's kernel families (its "core": openblas_get_corename(), OPENBLAS_CORETYPE)
// runs beside the kernels' ISA level. OpenBLAS picks its core from a cpuid table fixed when it was
// released: Debian 12's 0.3.21 does not know the Xeons of family 6 model 207 and runs its Prescott
// core there, SSE3 code, on a CPU with AVX-512: the sgemm probe and attention ran at 0.3 of what
// the CPU's AVX-512 sgemm does (bench/README.md). The probe is meant to be the machine's own limit.
// The choice is made once, before OpenBLAS is loaded again (cli/openblas_core.h); an
// OPENBLAS_CORETYPE the user set is always kept.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/isa.h"

namespace ropecheck {

// The core to ask OpenBLAS for at `level`, or none where `detected` (OpenBLAS's own choice)
// already runs the level's vectors:
//   avx2:   Haswell unless detected is an AVX2 core (Haswell, Zen). An AVX-512 core is lowered
//           too: ROPECHECK_ISA=avx2 runs the whole process as an AVX2 machine, sgemm included.
//   avx512: SkylakeX unless detected is an AVX-512 core (SkylakeX, Cooperlake, SapphireRapids)
//           or an AVX2 one (a CPU OpenBLAS knows and serves with its AVX2 kernels, as it may a
//           Zen 4: its own judgement).
//   scalar: none: the portable level promises no vectors, and OpenBLAS's choice is kept.
// Names compare without regard to case, as OpenBLAS reads OPENBLAS_CORETYPE.
std::optional<std::string> blas_core_for(Isa level, std::string_view detected);

// The variable the re-run process finds OpenBLAS's own choice in (for the bench's context and the
// report: "SkylakeX, chosen for the avx512 level; OpenBLAS detected Prescott").
inline constexpr const char* kOpenBlasDetectedCoreVariable = "ROPECHECK_OPENBLAS_DETECTED_CORE";

}  // namespace ropecheck
