// Instruction-set levels and run-time selection. Kernels for every level are always built (each
// in its own object library with its own flags); cpuid decides which can run here, and
// ROPECHECK_ISA=scalar|avx2|avx512 pins the level that dispatch picks (tests, benchmarks, a CPU
// whose fast path is suspected). Never -march=native: the binary runs on any x86-64.
#pragma once

#include <string>
#include <string_view>

namespace ropecheck {

// avx2: AVX2 + FMA + F16C (the fp16 kernel's conversions; every AVX2 CPU has it).
// avx512: AVX-512 F, DQ, VL, BW.
enum class Isa { scalar, avx2, avx512 };

std::string_view to_string(Isa isa);
Isa parse_isa(std::string_view text);  // throws InvalidInput

// Whether this CPU (and OS) can run the level, and ROPECHECK_ISA does not cap it below; `why` says
// what is missing when it cannot.
bool cpu_supports(Isa isa, std::string* why = nullptr);

// The avx512 level plus the AVX512_BF16 extension (bf16 conversion instructions). An extension,
// not a dispatch level: only the bf16 kernel that rounds with vcvtneps2bf16 needs it.
bool cpu_supports_avx512_bf16(std::string* why = nullptr);

// The level dispatch uses: ROPECHECK_ISA when set (InvalidInput if unknown or unsupported here),
// else the best level this CPU supports.
Isa dispatched_isa();

}  // namespace ropecheck
