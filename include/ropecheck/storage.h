// Storage types: the element type q and k live in. bf16 is the top half of an fp32 (8 exponent
// bits, 8 significant bits), so widening is exact and narrowing is one rounding; implementations
// that store bf16 compute in fp32 (tolerance.h derives the bound from that one rounding).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace ropecheck {

enum class StorageType { fp32, bf16 };

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

// The value an implementation storing `storage` holds for x (x itself for fp32).
inline float round_to_storage(float x, StorageType storage) {
  return storage == StorageType::bf16 ? float_from_bf16(bf16_from_float(x)) : x;
}

// Largest finite value of the storage type.
inline constexpr float kBf16Max = 0x1.FEp127f;  // 0x7F7F

}  // namespace ropecheck
