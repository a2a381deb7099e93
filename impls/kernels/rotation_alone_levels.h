// The kernels' rotations alone (rope_kernel.h rotation_alone_*), one for each SIMD kernel level
// on every storage: what `ropecheck bench` times as that kernel's rotation ceiling. A kernel
// rotates the same bytes with the same instructions but also loads its cos/sin table (or forms
// it) and walks its heads; here cos and sin stay in registers and nothing else happens, so no
// kernel of a level beats its rotation alone, and where a target lies above it, the level's
// instructions on this core, not the kernel's table or walk, are what stand in the way.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/fp16_bits.h"
#include "core/isa.h"
#include "core/storage.h"

namespace ropecheck::kernels {

struct RotationAloneLevel {
  std::string_view id;         // "rotation_fp16/avx2": the kernel's id, "rotation" for "kernel"
  std::string_view kernel_id;  // "kernel_fp16/avx2": the kernel whose storage code and arithmetic it runs
  StorageType storage;         // which one of the three functions is set
  Isa isa;
  bool needs_avx512_bf16;
  int block_elements;          // elements a block: two of the level's registers (rope_kernel.h);
                               // 0: the registers' length is the CPU's (SVE), block() asks it
  void (*fp32)(float* x, std::int64_t n, bool interleaved);
  void (*fp16)(Fp16* x, std::int64_t n, bool interleaved);
  void (*bf16)(std::uint16_t* x, std::int64_t n, bool interleaved);

  // cpuid (and ROPECHECK_ISA's cap, as the kernels'): false with `why` when this CPU cannot run it.
  bool available(std::string* why = nullptr) const;
  // Elements a block on this CPU: block_elements, or for a vector-length agnostic level (0 there)
  // two of its registers at the vector length this process runs at.
  int block() const;
};

std::span<const RotationAloneLevel> rotation_alone_levels();

}  // namespace ropecheck::kernels
