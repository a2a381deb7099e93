// Same-run machine limits for the benchmarks: an in-place streaming update x[i] = s * x[i], the
// bound for any in-place RoPE (it reads and writes each float once and does no other work).
// Written with AVX-512 intrinsics (AVX2, then a plain loop, where the CPU lacks it) so that the
// limit is the memory system's, not a -O2 scalar loop's.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace ropecheck::bench {

// x[i] = s * x[i] over the whole span, by the best level this CPU has (chosen once, by cpuid).
void inplace_scale(std::span<float> x, float s);

// The streams of a pass that reads some buffers and writes others (the fused RoPE + KV-cache
// call's: k and v read, the cache rows written), at the same level: every float of x read (the
// sum returned, so that the reads stay), and every byte of out stored (plain stores, which fetch
// the line first as a kernel's do).
float stream_read(std::span<const float> x);
void stream_fill(std::span<std::byte> out, std::byte value);

// The level inplace_scale runs at here: "avx512f", "avx2", "neon" or "scalar".
std::string_view inplace_scale_isa();

}  // namespace ropecheck::bench
