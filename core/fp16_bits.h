// The fp16 element type: IEEE binary16 bit patterns, a type of its own so that overloads and
// kernels tell fp16 buffers from bf16's std::uint16_t ones. Data only, no functions: the ISA
// kernels include it, and nothing they include may define code another level could link to.
#pragma once

#include <cstdint>

namespace ropecheck {

struct Fp16 {
  std::uint16_t bits;
};
static_assert(sizeof(Fp16) == 2, "a buffer of Fp16 is a buffer of binary16 values");

}  // namespace ropecheck
