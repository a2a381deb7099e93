// seeded_floats() (properties/harness/model_shape_cases.h), the values of a model shape's tensors:
// a function of the seed and the index alone, and distributed as finite_float() draws them (1 in 7
// a signed zero, else a normal float with a uniform exponent in the range and either sign).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "properties/harness/generators.h"
#include "properties/harness/model_shape_cases.h"

namespace ropecheck {
namespace {

std::vector<std::uint32_t> seeded_bits(const std::vector<float>& x) {
  std::vector<std::uint32_t> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = std::bit_cast<std::uint32_t>(x[i]);
  return out;
}

TEST(SeededValues, TheSameSeedGivesTheSameBitsAndAPrefixDoesNotDependOnTheLength) {
  const auto a = seeded_bits(seeded_floats(100000, kMinFiniteExponent, kMaxFiniteExponent, ValuesSeed{7}));
  const auto b = seeded_bits(seeded_floats(100000, kMinFiniteExponent, kMaxFiniteExponent, ValuesSeed{7}));
  const auto prefix = seeded_bits(seeded_floats(1001, kMinFiniteExponent, kMaxFiniteExponent, ValuesSeed{7}));  // a loop remainder
  const auto other = seeded_bits(seeded_floats(100000, kMinFiniteExponent, kMaxFiniteExponent, ValuesSeed{8}));
  EXPECT_EQ(a, b);
  EXPECT_EQ(prefix, std::vector<std::uint32_t>(a.begin(), a.begin() + 1001));
  std::size_t same = 0;
  for (std::size_t i = 0; i < a.size(); ++i) same += a[i] == other[i];
  EXPECT_LT(same, a.size() / 50) << "another seed should give other values (zeros aside)";
}

TEST(SeededValues, OneInSevenIsASignedZeroTheRestNormalWithEveryExponentOfTheRange) {
  for (const auto& [lo, hi] : {std::pair{kMinFiniteExponent, kMaxFiniteExponent}, std::pair{kFp16MinExponent, kFp16MaxExponent}}) {
    SCOPED_TRACE(testing::Message() << "exponents " << lo << " .. " << hi);
    const std::size_t n = 1 << 20;
    const auto x = seeded_floats(n, lo, hi, ValuesSeed{12345});
    std::size_t zeros = 0, negative = 0;
    std::vector<std::size_t> per_exponent(static_cast<std::size_t>(hi - lo + 1));
    for (const float v : x) {
      negative += std::signbit(v);
      if (v == 0.0f) {
        ++zeros;
        continue;
      }
      ASSERT_TRUE(std::isnormal(v)) << v;
      const int e = std::ilogb(v);
      ASSERT_GE(e, lo) << v;
      ASSERT_LE(e, hi) << v;
      ++per_exponent[static_cast<std::size_t>(e - lo)];
    }
    // Binomial counts: 2^20 draws at p = 1/7 have a standard deviation of 358; 5 of them is 1790.
    EXPECT_NEAR(static_cast<double>(zeros), n / 7.0, 1790.0);
    EXPECT_NEAR(static_cast<double>(negative), n / 2.0, 2560.0);  // 5 sd at p = 1/2
    const double per = static_cast<double>(n - zeros) / static_cast<double>(per_exponent.size());
    for (std::size_t e = 0; e < per_exponent.size(); ++e) {
      EXPECT_NEAR(static_cast<double>(per_exponent[e]), per, 5 * std::sqrt(per)) << "exponent " << lo + static_cast<int>(e);
    }
  }
}

}  // namespace
}  // namespace ropecheck
