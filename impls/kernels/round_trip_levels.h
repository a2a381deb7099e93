// The 16-bit kernels' conversions alone (rope_kernel.h round_trip_*), one for each kernel level on
// bf16 or fp16 storage: what `ropecheck bench` times as that kernel's ceiling. Every element of q
// and k is widened to fp32 and narrowed back in any RoPE on 16-bit storage, so no kernel of a
// level can beat its own conversions' rate; where a target lies above it, the level's conversion
// instructions, not the rotation, are what stands in the way.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/fp16_bits.h"
#include "core/isa.h"
#include "core/storage.h"

namespace ropecheck::kernels {

struct RoundTripLevel {
  std::string_view id;         // "conversion_fp16/avx512": the kernel's id, "conversion" for "kernel"
  std::string_view kernel_id;  // "kernel_fp16/avx512": the kernel whose load and store code it runs
  StorageType storage;         // fp16 or bf16: which of the two functions is set
  Isa isa;
  bool needs_avx512_bf16;
  void (*fp16)(Fp16* x, std::int64_t n);
  void (*bf16)(std::uint16_t* x, std::int64_t n);

  // cpuid (and ROPECHECK_ISA's cap, as the kernels'): false with `why` when this CPU cannot run it.
  bool available(std::string* why = nullptr) const;
};

std::span<const RoundTripLevel> round_trip_levels();

}  // namespace ropecheck::kernels
