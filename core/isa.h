// Instruction-set levels and run-time selection. Every level of the architecture a build is for
// is always built (each in its own object library with its own flags), and nothing of another
// architecture's: an x86-64 build has scalar, AVX2 and AVX-512; an aarch64 build scalar, NEON and
// SVE. At run time the CPU decides which can run here (cpuid on x86-64, getauxval(AT_HWCAP) on
// aarch64), and ROPECHECK_ISA=<level> pins the level that dispatch picks (tests, benchmarks, a CPU
// whose fast path is suspected). Never -march=native: the binary runs on any CPU of its
// architecture.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace ropecheck {

// avx2: AVX2 + FMA + F16C (the fp16 kernel's conversions; every AVX2 CPU has it).
// avx512: AVX-512 F, DQ, VL, BW.
// neon: Advanced SIMD, 128 bits (every aarch64 CPU; its fp16 <-> fp32 conversions are baseline).
// sve: the Scalable Vector Extension, vector-length agnostic (128 to 2048 bits).
enum class Isa { scalar, avx2, avx512, neon, sve };

std::string_view to_string(Isa isa);
Isa parse_isa(std::string_view text);  // throws InvalidInput (every level's name is known)

// The levels this build has, lowest first: scalar first, then its architecture's (x86-64:
// avx2, avx512; aarch64: neon, sve).
std::span<const Isa> built_levels();
bool built_here(Isa isa);

// Whether this CPU (and OS) can run the level, and ROPECHECK_ISA does not cap it below; `why` says
// what is missing when it cannot (a level of another architecture: not built here).
bool cpu_supports(Isa isa, std::string* why = nullptr);

// The avx512 level plus the AVX512_BF16 extension (bf16 conversion instructions). An extension,
// not a dispatch level: only the bf16 kernel that rounds with vcvtneps2bf16 needs it.
bool cpu_supports_avx512_bf16(std::string* why = nullptr);

// The SVE vector length in bits this process runs at (0 without SVE): the kernels are vector-length
// agnostic, so the figure is what a run was verified at, recorded beside its results.
int sve_vector_bits();

// The level dispatch uses: ROPECHECK_ISA when set (InvalidInput if unknown or unsupported here),
// else the best level this CPU supports.
Isa dispatched_isa();

}  // namespace ropecheck
