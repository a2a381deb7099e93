// One rounding from double to bf16 and FP8 (round_once.h).
#include "vectors/round_once.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "core/storage.h"

namespace ropecheck {

std::uint16_t bf16_from_double(double x) {
  // Going through float first is exact except when the float lands on a bf16 midpoint it did not
  // start on: then the double's side of the midpoint decides.
  const float f = static_cast<float>(x);
  const auto bits = std::bit_cast<std::uint32_t>(f);
  if ((bits & 0xFFFFu) == 0x8000u && static_cast<double>(f) != x && std::isfinite(f)) {
    const bool away = std::abs(x) > std::abs(static_cast<double>(f));
    return static_cast<std::uint16_t>((bits >> 16) + (away ? 1u : 0u));
  }
  return bf16_from_float(f);
}

std::uint8_t fp8_from_double(double x, Fp8Format format) {
  if (!std::isfinite(x)) return fp8_from_float(static_cast<float>(x), format);  // NaN; Inf saturates
  const Fp8Traits t = fp8_traits(format);
  // The spacing at |x|: 2^(e - M) in a normal binade 2^e, the subnormal spacing under the
  // smallest normal 2^(1 - bias) (where ilogb(0), hugely negative, lands too). x / spacing is
  // exact, nearbyint rounds it to nearest even, and an even multiple of the spacing has an even
  // significand.
  const int min_exponent = 1 - t.bias;
  const double spacing = std::ldexp(1.0, std::max(std::ilogb(x), min_exponent) - t.mantissa_bits);
  const double rounded = std::nearbyint(x / spacing) * spacing;
  // `rounded` is an FP8 value, or one binade step past the largest (which saturates): exact in
  // float, so fp8_from_float rounds nothing more and saturates the rest.
  const double clamped = std::clamp(rounded, -static_cast<double>(t.max), static_cast<double>(t.max));
  return fp8_from_float(static_cast<float>(clamped), format);
}

}  // namespace ropecheck
