// A float64 expected value rounded once, straight to a narrower storage, for the golden vectors'
// *_expected_<storage>.npy files. Rounding to float first and then to the narrow type can land
// exactly on a midpoint of the narrow type that the double was only near; that tie then goes to
// the even neighbour, not to the double's side (golden_cases.h's fp16_from_double for fp16).
#pragma once

#include <cstdint>

#include "core/fp8.h"

namespace ropecheck {

// bf16 bits, nearest even.
std::uint16_t bf16_from_double(double x);

// The FP8 code of x, nearest even, saturating at the format's largest finite value as a cache
// write narrows (core/fp8.h): what rounds past it, and +-Inf, becomes +-largest; NaN stays NaN.
std::uint8_t fp8_from_double(double x, Fp8Format format);

}  // namespace ropecheck
