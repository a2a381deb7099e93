// The whole-tensor conversions (core/storage_convert.h) give storage.h's per-value bits: every
// half, every bf16, and floats at every rounding boundary of every exponent (the ties, one below
// and above them, the carries into the exponent), the fp16 subnormal range densely, and a strided
// sweep over all 2^32 bit patterns. A loop clone that rounds one case differently fails here.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <vector>

#include "core/storage_convert.h"

namespace ropecheck {
namespace {

std::vector<float> floats_of(const std::vector<std::uint32_t>& bits) {
  std::vector<float> out(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) out[i] = std::bit_cast<float>(bits[i]);
  return out;
}

// Float bit patterns where the narrowing's rounding decides: for every sign and exponent, every
// top mantissa pattern with low bits at and beside fp16's and bf16's halfway points.
std::vector<std::uint32_t> rounding_boundaries() {
  std::vector<std::uint32_t> bits;
  for (std::uint32_t sign = 0; sign < 2; ++sign) {
    for (std::uint32_t exponent = 0; exponent < 256; ++exponent) {
      for (std::uint32_t top = 0; top < 1024; ++top) {
        for (std::uint32_t low : {0x0u, 0x1u, 0xFFFu, 0x1000u, 0x1001u, 0x1FFFu}) {
          bits.push_back(sign << 31 | exponent << 23 | top << 13 | low);
        }
        for (std::uint32_t low : {0x7FFFu, 0x8000u, 0x8001u}) {  // bf16's
          bits.push_back(sign << 31 | exponent << 23 | (top & 0x7Fu) << 16 | low);
        }
      }
    }
  }
  return bits;
}

// fp16's subnormal results (2^-25 .. 2^-14: float exponents 102 .. 112) every 127th pattern, and
// all 2^32 patterns every 4093rd (a few million: the sanitizer build runs this too; all 2^32 were
// checked once for each clone, outside the suite).
std::vector<std::uint32_t> dense_and_strided() {
  std::vector<std::uint32_t> bits;
  for (std::uint64_t b = 102u << 23; b < 113u << 23; b += 127) {
    bits.push_back(static_cast<std::uint32_t>(b));
    bits.push_back(static_cast<std::uint32_t>(b) | 0x80000000u);
  }
  for (std::uint64_t b = 0; b < (std::uint64_t{1} << 32); b += 4093) bits.push_back(static_cast<std::uint32_t>(b));
  return bits;
}

void expect_narrowing_matches(const std::vector<float>& x) {
  std::vector<Fp16> fp16(x.size());
  std::vector<std::uint16_t> bf16(x.size());
  narrow_to_fp16(x, fp16);
  narrow_to_bf16(x, bf16);
  std::vector<float> rounded_fp16 = x, rounded_bf16 = x;
  round_to_storage(std::span<float>(rounded_fp16), StorageType::fp16);
  round_to_storage(std::span<float>(rounded_bf16), StorageType::bf16);
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < x.size() && mismatches < 5; ++i) {
    const auto bits = std::bit_cast<std::uint32_t>(x[i]);
    const auto want16 = fp16_from_float(x[i]).bits;
    const auto want_round16 = std::bit_cast<std::uint32_t>(round_to_storage(x[i], StorageType::fp16));
    const auto want_round_bf = std::bit_cast<std::uint32_t>(round_to_storage(x[i], StorageType::bf16));
    const bool ok = fp16[i].bits == want16 && bf16[i] == bf16_from_float(x[i]) &&
                    std::bit_cast<std::uint32_t>(rounded_fp16[i]) == want_round16 &&
                    std::bit_cast<std::uint32_t>(rounded_bf16[i]) == want_round_bf;
    if (!ok) {
      ++mismatches;
      ADD_FAILURE() << std::hex << "float bits 0x" << bits << ": fp16 0x" << fp16[i].bits << " want 0x"
                    << want16 << ", bf16 0x" << bf16[i] << " want 0x" << bf16_from_float(x[i]);
    }
  }
}

TEST(StorageConvert, NarrowingMatchesThePerValueFunctionsAtEveryRoundingBoundary) {
  expect_narrowing_matches(floats_of(rounding_boundaries()));
}

TEST(StorageConvert, NarrowingMatchesThePerValueFunctionsInTheSubnormalsAndAcrossAllFloats) {
  expect_narrowing_matches(floats_of(dense_and_strided()));
}

TEST(StorageConvert, WideningMatchesThePerValueFunctionsForEverySixteenBitPattern) {
  std::vector<Fp16> fp16(65536);
  std::vector<std::uint16_t> bf16(65536);
  for (std::uint32_t i = 0; i < 65536; ++i) {
    fp16[i] = Fp16{static_cast<std::uint16_t>(i)};
    bf16[i] = static_cast<std::uint16_t>(i);
  }
  std::vector<float> from_fp16(65536), from_bf16(65536);
  widen_from_fp16(fp16, from_fp16);
  widen_from_bf16(bf16, from_bf16);
  for (std::uint32_t i = 0; i < 65536; ++i) {
    ASSERT_EQ(std::bit_cast<std::uint32_t>(from_fp16[i]), std::bit_cast<std::uint32_t>(float_from_fp16(fp16[i])))
        << std::hex << "half 0x" << i;
    ASSERT_EQ(std::bit_cast<std::uint32_t>(from_bf16[i]), std::bit_cast<std::uint32_t>(float_from_bf16(bf16[i])))
        << std::hex << "bf16 0x" << i;
  }
}

TEST(StorageConvert, TensorsOfDifferentSizesAreRefused) {
  std::vector<float> x(3);
  std::vector<Fp16> y(2);
  EXPECT_THROW(narrow_to_fp16(x, y), std::logic_error);
}

}  // namespace
}  // namespace ropecheck
