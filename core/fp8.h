// FP8, the KV cache's 8-bit storage (OCP 8-bit floating point, as vLLM, FlashInfer, TensorRT-LLM
// and PyTorch's float8_e4m3fn / float8_e5m2 lay it out):
//   e4m3 (e4m3fn): 4 exponent bits (bias 7), 3 mantissa bits; no Inf; NaN is S.1111.111 only, so
//        the largest finite value is S.1111.110 = 448; subnormals are multiples of 2^-9.
//   e5m2: 5 exponent bits (bias 15), 2 mantissa bits, binary16's top byte: Inf and NaN as IEEE;
//        the largest finite value is 57344; subnormals are multiples of 2^-16.
// A cache write narrows with saturation (CUDA's __NV_SATFINITE, FlashInfer's and vLLM's casts):
// round to nearest even, and what rounds past the largest finite value (Inf included) becomes it,
// so that no finite input becomes Inf or NaN; a NaN stays a NaN. Eager torch `.to(float8_e4m3fn)`
// does not saturate (pytorch/ao #1912): 449 became NaN there.
// Data and inline functions only: the ISA kernels include it.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace ropecheck {

enum class Fp8Format { e4m3, e5m2 };

inline constexpr std::string_view to_string(Fp8Format format) {
  return format == Fp8Format::e4m3 ? "e4m3" : "e5m2";
}

struct Fp8Traits {
  int mantissa_bits;       // 3, 2
  int bias;                // 7, 15
  float max;               // the largest finite value: 448, 57344
  float min_subnormal;     // the spacing below the smallest normal: 2^-9, 2^-16
  std::uint8_t max_bits;   // its bit pattern without the sign: 0x7E, 0x7B
  std::uint8_t nan_bits;   // a quiet NaN without the sign: 0x7F, 0x7E
};

inline constexpr Fp8Traits fp8_traits(Fp8Format format) {
  return format == Fp8Format::e4m3 ? Fp8Traits{3, 7, 448.0f, 0x1p-9f, 0x7E, 0x7F}
                                   : Fp8Traits{2, 15, 57344.0f, 0x1p-16f, 0x7B, 0x7E};
}

// x narrowed to `format`: round to nearest even, saturated at the largest finite value.
inline std::uint8_t fp8_from_float(float x, Fp8Format format) {
  const Fp8Traits t = fp8_traits(format);
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  const auto sign = static_cast<std::uint8_t>((bits >> 24) & 0x80u);
  const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return static_cast<std::uint8_t>(sign | t.nan_bits);
  if (magnitude == 0x7F800000u) return static_cast<std::uint8_t>(sign | t.max_bits);  // Inf saturates
  const int drop = 23 - t.mantissa_bits;  // float mantissa bits the format does not keep
  // The smallest normal's float exponent field: 1 - bias + 127.
  const std::uint32_t min_normal_field = static_cast<std::uint32_t>(128 - t.bias);
  std::uint32_t code;  // the magnitude's 7-bit code, before saturation
  if ((magnitude >> 23) >= min_normal_field) {
    // Normal: drop the low bits ties to even (a carry into the exponent is right), rebias.
    const std::uint32_t lsb = (magnitude >> drop) & 1u;
    const std::uint32_t rounded = (magnitude + ((1u << (drop - 1)) - 1u) + lsb) >> drop;
    code = rounded - (static_cast<std::uint32_t>(127 - t.bias) << t.mantissa_bits);
  } else {
    // Subnormal or zero: the value in units of min_subnormal, ties to even; a float subnormal, or
    // anything under half a unit, is 0.
    const std::uint32_t exponent = magnitude >> 23;
    const int shift = static_cast<int>(min_normal_field) - static_cast<int>(exponent) + drop;
    if (exponent == 0 || shift > 24) return sign;
    const std::uint32_t significand = (magnitude & 0x7FFFFFu) | 0x800000u;
    const std::uint32_t halfway = 1u << (shift - 1);
    const std::uint32_t remainder = significand & ((1u << shift) - 1u);
    code = significand >> shift;
    if (remainder > halfway || (remainder == halfway && (code & 1u) != 0)) ++code;  // may reach normal
  }
  if (code > t.max_bits) code = t.max_bits;  // saturate: e4m3's 0x7F is NaN, e5m2's 0x7C Inf
  return static_cast<std::uint8_t>(sign | code);
}

// The value an FP8 code holds (exact in float).
inline float float_from_fp8(std::uint8_t code, Fp8Format format) {
  const Fp8Traits t = fp8_traits(format);
  const bool negative = (code & 0x80u) != 0;
  const std::uint32_t magnitude = code & 0x7Fu;
  const std::uint32_t exponent = magnitude >> t.mantissa_bits;
  const std::uint32_t mantissa = magnitude & ((1u << t.mantissa_bits) - 1u);
  const std::uint32_t top_exponent = (1u << (7 - t.mantissa_bits)) - 1u;
  float value;
  if (format == Fp8Format::e4m3 && magnitude == 0x7Fu) {
    value = __builtin_nanf("");
  } else if (format == Fp8Format::e5m2 && exponent == top_exponent) {
    value = mantissa == 0 ? __builtin_inff() : __builtin_nanf("");
  } else if (exponent == 0) {
    value = static_cast<float>(mantissa) * t.min_subnormal;  // exact
  } else {
    const std::uint32_t bits = ((exponent + 127u - static_cast<std::uint32_t>(t.bias)) << 23) |
                               (mantissa << (23 - t.mantissa_bits));
    std::memcpy(&value, &bits, sizeof value);
  }
  return negative ? -value : value;
}

}  // namespace ropecheck
