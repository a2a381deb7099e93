// Same-run machine limits for the benchmarks: an in-place streaming update x[i] = s * x[i], the
// bound for any in-place RoPE (it reads and writes each float once and does no other work).
// Written with AVX-512 intrinsics (AVX2, then a plain loop, where the CPU lacks it) so that the
// limit is the memory system's, not a -O2 scalar loop's.
#pragma once

#include <span>
#include <string_view>

namespace ropecheck::bench {

// x[i] = s * x[i] over the whole span, by the best level this CPU has (chosen once, by cpuid).
void inplace_scale(std::span<float> x, float s);

// The level inplace_scale runs at here: "avx512f", "avx2" or "scalar".
std::string_view inplace_scale_isa();

}  // namespace ropecheck::bench
