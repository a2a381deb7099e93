// Storage types: the element type q and k live in. Implementations that store bf16 or fp16
// compute in fp32: widening is exact, narrowing is one rounding (tolerance.h derives the bound).
//   bf16: the top half of an fp32 (8 exponent bits, 8 significant bits), fp32's range.
//   fp16: IEEE binary16 (5 exponent bits, 11 significant bits): normal from 2^-14 to 65504,
//         subnormal multiples of 2^-24 below that, so its rounding is relative (2^-11) only for
//         results of at least 2^-14 and absolute (2^-25) under it.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/fp16_bits.h"

namespace ropecheck {

enum class StorageType { fp32, bf16, fp16 };

std::string_view to_string(StorageType storage);

// Round to nearest even, as vcvtneps2bf16 does on normal numbers; Inf stays Inf, a NaN stays a
// (quiet) NaN with its sign, values past the largest bf16 round to Inf.
inline std::uint16_t bf16_from_float(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);
  const std::uint32_t lsb = (bits >> 16) & 1u;  // ties go to the even bf16
  return static_cast<std::uint16_t>((bits + 0x7FFFu + lsb) >> 16);
}

inline float float_from_bf16(std::uint16_t half) {
  const std::uint32_t bits = static_cast<std::uint32_t>(half) << 16;
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// Round to nearest even, as vcvtps2ph with _MM_FROUND_TO_NEAREST_INT does: subnormal results
// kept (not flushed), values of 65520 (the midpoint past the largest fp16) and above to Inf, a
// NaN stays a quiet NaN with its sign and the top 10 bits of its payload.
inline Fp16 fp16_from_float(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) {
    return {static_cast<std::uint16_t>(sign | 0x7E00u | ((magnitude >> 13) & 0x3FFu))};
  }
  if (magnitude >= 0x477FF000u) return {static_cast<std::uint16_t>(sign | 0x7C00u)};  // >= 65520
  if (magnitude >= 0x38800000u) {  // >= 2^-14: normal. Drop 13 mantissa bits, ties to even; a
    // carry into the exponent is the right result. Then rebias the exponent from 127 to 15.
    const std::uint32_t lsb = (magnitude >> 13) & 1u;
    const std::uint32_t rounded = (magnitude + 0xFFFu + lsb) >> 13;
    return {static_cast<std::uint16_t>(sign | (rounded - ((127u - 15u) << 10)))};
  }
  // Subnormal: the value in units of 2^-24, rounded to nearest even (2^-25 itself ties to 0).
  const std::uint32_t exponent = magnitude >> 23;
  if (exponent < 102) return {sign};  // below 2^-25
  const std::uint32_t significand = (magnitude & 0x7FFFFFu) | 0x800000u;
  const std::uint32_t shift = 126u - exponent;  // 14 .. 24
  const std::uint32_t halfway = 1u << (shift - 1);
  const std::uint32_t remainder = significand & ((1u << shift) - 1u);
  std::uint32_t units = significand >> shift;
  if (remainder > halfway || (remainder == halfway && (units & 1u) != 0)) ++units;  // may reach 2^-14
  return {static_cast<std::uint16_t>(sign | units)};
}

inline float float_from_fp16(Fp16 half) {
  const std::uint32_t sign = static_cast<std::uint32_t>(half.bits & 0x8000u) << 16;
  const std::uint32_t exponent = (half.bits >> 10) & 0x1Fu;
  const std::uint32_t mantissa = half.bits & 0x3FFu;
  std::uint32_t bits;
  if (exponent == 0x1F) {
    bits = sign | 0x7F800000u | (mantissa << 13);  // Inf, NaN (payload kept)
  } else if (exponent != 0) {
    bits = sign | ((exponent + 127u - 15u) << 23) | (mantissa << 13);
  } else {
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;  // subnormal or zero: exact
    std::memcpy(&bits, &magnitude, sizeof bits);
    bits |= sign;
  }
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// The value an implementation storing `storage` holds for x (x itself for fp32).
inline float round_to_storage(float x, StorageType storage) {
  switch (storage) {
    case StorageType::bf16: return float_from_bf16(bf16_from_float(x));
    case StorageType::fp16: return float_from_fp16(fp16_from_float(x));
    case StorageType::fp32: break;
  }
  return x;
}

// Largest finite value of each storage type.
inline constexpr float kBf16Max = 0x1.FEp127f;  // 0x7F7F
inline constexpr float kFp16Max = 65504.0f;     // 0x7BFF
// Smallest normal fp16: below it, fp16 holds multiples of 2^-24 (absolute rounding).
inline constexpr float kFp16MinNormal = 0x1p-14f;

// Largest finite value `storage` holds.
inline constexpr float storage_max(StorageType storage) {
  switch (storage) {
    case StorageType::bf16: return kBf16Max;
    case StorageType::fp16: return kFp16Max;
    case StorageType::fp32: break;
  }
  return 0x1.FFFFFEp127f;
}

}  // namespace ropecheck
