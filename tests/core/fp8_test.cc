// core/fp8.h against a reference written from the formats' definitions in double: every code
// decoded, and floats narrowed at every midpoint between neighbouring values (the ties), a float
// step either side of each, past the largest finite value, and a quarter million bit patterns spread over
// the whole float range.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "core/fp8.h"
#include "core/tolerance.h"

namespace ropecheck {
namespace {

// The value of a code by the definition: (1 + m / 2^M) 2^(e - bias), or m 2^(1 - bias - M) at e = 0.
double defined_value(std::uint8_t code, Fp8Format format) {
  const int mantissa_bits = format == Fp8Format::e4m3 ? 3 : 2;
  const int bias = format == Fp8Format::e4m3 ? 7 : 15;
  const int exponent = (code & 0x7F) >> mantissa_bits;
  const int mantissa = code & ((1 << mantissa_bits) - 1);
  const int top = (1 << (7 - mantissa_bits)) - 1;
  double value;
  if (format == Fp8Format::e4m3 && (code & 0x7F) == 0x7F) return std::numeric_limits<double>::quiet_NaN();
  if (format == Fp8Format::e5m2 && exponent == top) {
    value = mantissa == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (exponent == 0) {
    value = std::ldexp(mantissa, 1 - bias - mantissa_bits);
  } else {
    value = std::ldexp(1.0 + std::ldexp(mantissa, -mantissa_bits), exponent - bias);
  }
  return (code & 0x80) ? -value : value;
}

// The finite non-negative codes, in increasing order of value.
std::vector<std::uint8_t> finite_codes(Fp8Format format) {
  std::vector<std::uint8_t> codes;
  for (int c = 0; c < 0x80; ++c) {
    if (std::isfinite(defined_value(static_cast<std::uint8_t>(c), format))) codes.push_back(static_cast<std::uint8_t>(c));
  }
  return codes;
}

// The code x narrows to by the definition: the nearest finite value, ties to the even code, and
// the largest finite value for anything past it (saturation). `codes`: finite_codes(format),
// `values` their defined values.
std::uint8_t defined_code(float x, const std::vector<std::uint8_t>& codes, const std::vector<double>& values) {
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const double magnitude = std::fabs(static_cast<double>(x));
  const auto above = static_cast<std::size_t>(std::lower_bound(values.begin(), values.end(), magnitude) - values.begin());
  if (above == values.size()) return static_cast<std::uint8_t>(sign | codes.back());
  if (above == 0) return static_cast<std::uint8_t>(sign | codes[0]);
  // The nearest is the value at or above it or the one below.
  const double to_low = magnitude - values[above - 1], to_high = values[above] - magnitude;
  const std::uint8_t low = codes[above - 1], high = codes[above];
  const std::uint8_t best = to_low < to_high ? low : to_high < to_low ? high : (low & 1) == 0 ? low : high;
  return static_cast<std::uint8_t>(sign | best);
}

float float_of_bits(std::uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

class Fp8 : public testing::TestWithParam<Fp8Format> {};

TEST_P(Fp8, EveryCodeDecodesToItsDefinedValue) {
  const Fp8Format format = GetParam();
  for (int c = 0; c < 256; ++c) {
    const auto code = static_cast<std::uint8_t>(c);
    const double want = defined_value(code, format);
    const float got = float_from_fp8(code, format);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << c;
    } else {
      EXPECT_EQ(static_cast<double>(got), want) << "code 0x" << std::hex << c;
      EXPECT_EQ(std::signbit(got), (c & 0x80) != 0) << c;
    }
  }
  EXPECT_EQ(float_from_fp8(fp8_traits(format).max_bits, format), fp8_traits(format).max);
}

TEST_P(Fp8, NarrowingRoundsToNearestEvenAndSaturates) {
  const Fp8Format format = GetParam();
  const auto codes = finite_codes(format);
  std::vector<double> values;
  for (const std::uint8_t c : codes) values.push_back(defined_value(c, format));
  std::vector<float> inputs = {0.0f, -0.0f, 1.0f, 449.0f, 464.0f, 480.0f, 57344.0f, 61440.0f, 65504.0f, 1e30f,
                               std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min(),
                               std::numeric_limits<float>::min()};
  for (std::size_t i = 0; i + 1 < codes.size(); ++i) {
    const double low = defined_value(codes[i], format), high = defined_value(codes[i + 1], format);
    const auto mid = static_cast<float>((low + high) / 2);  // exact: a few bits more than FP8's
    for (const float x : {static_cast<float>(low), mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f)}) {
      inputs.push_back(x);
      inputs.push_back(-x);
    }
  }
  const double top = defined_value(codes.back(), format);
  for (const double past : {top * 1.0625, top * 1.125, top * 1.5, top * 2}) inputs.push_back(static_cast<float>(past));
  std::uint32_t bits = 12345;
  for (int i = 0; i < (1 << 18); ++i) {
    bits = bits * 1664525u + 1013904223u;  // every float bit pattern is reachable
    const float x = float_of_bits(bits);
    if (!std::isnan(x) && !std::isinf(x)) inputs.push_back(x);
  }
  int wrong = 0;
  for (const float x : inputs) {
    const std::uint8_t got = fp8_from_float(x, format), want = defined_code(x, codes, values);
    if (got != want && ++wrong <= 10) {
      ADD_FAILURE() << "fp8_from_float(" << x << ") = 0x" << std::hex << int{got} << ", want 0x" << int{want};
    }
    const float back = float_from_fp8(got, format);
    EXPECT_TRUE(std::isfinite(back)) << "a finite input became " << back << ": " << x;
  }
  EXPECT_EQ(wrong, 0);
}

TEST_P(Fp8, InfinitySaturatesAndNaNStaysNaN) {
  const Fp8Format format = GetParam();
  const float max = fp8_traits(format).max;
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(float_from_fp8(fp8_from_float(inf, format), format), max);
  EXPECT_EQ(float_from_fp8(fp8_from_float(-inf, format), format), -max);
  EXPECT_TRUE(std::isnan(float_from_fp8(fp8_from_float(std::nanf(""), format), format)));
  EXPECT_TRUE(std::isnan(float_from_fp8(fp8_from_float(-std::nanf(""), format), format)));
}

// The tolerance model's FP8 step (core/tolerance.h): every narrowing of a value within range is
// within u_8 max(|y|, n_8), and the bound is tight: just above a midpoint over a power of two the
// error reaches all but a sliver of it (halving the bound would fail there).
TEST_P(Fp8, NarrowingErrorIsWithinTheToleranceModelsStepAndTheStepIsTight) {
  const Fp8Format format = GetParam();
  const auto codes = finite_codes(format);
  double worst = 0;
  for (std::size_t i = 0; i + 1 < codes.size(); ++i) {
    const double low = defined_value(codes[i], format), high = defined_value(codes[i + 1], format);
    for (const double y : {low, (low + high) / 2, std::nextafter((low + high) / 2, 0.0),
                           std::nextafter((low + high) / 2, 1e9), low + (high - low) / 3}) {
      const double error = std::fabs(static_cast<double>(float_from_fp8(fp8_from_float(static_cast<float>(y), format),
                                                                         format)) - static_cast<double>(static_cast<float>(y)));
      const double bound = fp8_rounding_error(format, static_cast<float>(y));
      EXPECT_LE(error, bound) << y;
      worst = std::max(worst, error / bound);
    }
  }
  EXPECT_GT(worst, 0.99) << "the step is looser than the format's rounding";
}

INSTANTIATE_TEST_SUITE_P(Formats, Fp8, testing::Values(Fp8Format::e4m3, Fp8Format::e5m2),
                         [](const testing::TestParamInfo<Fp8Format>& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace ropecheck
