// bf16 storage, what only bf16 has: the portable conversion (round to nearest even, NaN kept,
// overflow to Inf); the two AVX-512 roundings (integer ops, vcvtneps2bf16) agree bit for bit;
// fp32 angles refused. The checks bf16 shares with fp16 are in storage16_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "core/errors.h"
#include "impls/oracle/oracle.h"
#include "impls/registry.h"
#include "core/tolerance.h"
#include "tests/support/rotary_elements.h"
#include "tests/support/test_config.h"

namespace ropecheck {
namespace {

TEST(Bf16Conversion, RoundsToNearestEven) {
  EXPECT_EQ(bf16_from_float(1.0f), 0x3F80);
  EXPECT_EQ(bf16_from_float(std::bit_cast<float>(0x3F808000u)), 0x3F80);  // tie, even stays
  EXPECT_EQ(bf16_from_float(std::bit_cast<float>(0x3F818000u)), 0x3F82);  // tie, odd rounds up to even
  EXPECT_EQ(bf16_from_float(std::bit_cast<float>(0x3F808001u)), 0x3F81);  // above the tie
  EXPECT_EQ(bf16_from_float(std::bit_cast<float>(0x3F807FFFu)), 0x3F80);  // below the tie
  EXPECT_EQ(bf16_from_float(-0.0f), 0x8000);
  EXPECT_EQ(bf16_from_float(std::numeric_limits<float>::max()), 0x7F80);  // past the largest: Inf
  EXPECT_EQ(bf16_from_float(kBf16Max), 0x7F7F);
  EXPECT_EQ(bf16_from_float(-INFINITY), 0xFF80);
  // A NaN whose carry would reach the exponent stays a NaN, sign kept.
  const std::uint16_t nan = bf16_from_float(std::bit_cast<float>(0xFFFFFFFFu));
  EXPECT_TRUE(std::isnan(float_from_bf16(nan)));
  EXPECT_EQ(nan & 0x8000, 0x8000);
  EXPECT_TRUE(std::isnan(float_from_bf16(bf16_from_float(std::bit_cast<float>(0x7F800001u)))));  // signalling
}

TEST(Bf16Conversion, EveryBf16RoundTripsAndEveryRoundingIsNearest) {
  for (std::uint32_t h = 0; h <= 0xFFFF; ++h) {
    const float f = float_from_bf16(static_cast<std::uint16_t>(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(bf16_from_float(f), h) << "bf16 " << h << " did not round-trip";
    // Halfway to the next bf16 up (in magnitude) and a little either side of it.
    if ((h & 0x7FFF) >= 0x7F7F) continue;  // the next one up is Inf
    const std::uint32_t bits = h << 16;
    const std::uint16_t even = (h & 1) ? static_cast<std::uint16_t>(h + 1) : static_cast<std::uint16_t>(h);
    EXPECT_EQ(bf16_from_float(std::bit_cast<float>(bits | 0x8000u)), even) << h;
    EXPECT_EQ(bf16_from_float(std::bit_cast<float>(bits | 0x7FFFu)), h) << h;
    EXPECT_EQ(bf16_from_float(std::bit_cast<float>(bits | 0x8001u)), h + 1) << h;
  }
}

#if defined(__x86_64__)  // the two AVX-512 bf16 roundings
// bf16 buffers as the kernels get them (the shared checks are in storage16_test.cc).
std::vector<std::uint16_t> bf16_run(const RopeImpl& impl, const RopeSpec& spec, std::int64_t tokens,
                                    std::int64_t q_heads, std::int64_t k_heads,
                                    const std::vector<std::int64_t>& positions) {
  const auto qn = static_cast<std::size_t>(tokens * q_heads * spec.head_dim);
  const auto kn = static_cast<std::size_t>(tokens * k_heads * spec.head_dim);
  std::vector<std::uint16_t> qk(qn + kn);
  for (std::size_t j = 0; j < qk.size(); ++j) qk[j] = bf16_from_float(std::sin(0.37f * static_cast<float>(j)) * 3.0f);
  impl.apply_bf16(spec, Bf16HeadTensor{std::span(qk).first(qn), tokens, q_heads, spec.head_dim},
                  Bf16HeadTensor{std::span(qk).subspan(qn), tokens, k_heads, spec.head_dim}, positions);
  return qk;
}

TEST(Bf16Storage, BothAvx512RoundingsAgreeBitForBit) {
  const RopeImpl* integer = find_rope("kernel_bf16/avx512");
  const RopeImpl* native = find_rope("kernel_bf16/avx512bf16");
  ASSERT_NE(integer, nullptr);
  ASSERT_NE(native, nullptr);
  if (!native->capabilities().available) GTEST_SKIP() << native->capabilities().unavailable_reason;
  // Same fp32 arithmetic, different narrowing instructions: identical for normal results.
  const std::vector<std::int64_t> positions = {3, 4096, 123457};
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    const RopeSpec spec{128, 96, 500000.0, layout, AnglePrecision::fp64, {}, {}};
    EXPECT_EQ(bf16_run(*integer, spec, 3, 8, 2, positions), bf16_run(*native, spec, 3, 8, 2, positions))
        << to_string(layout);
  }
}
#endif

TEST(Bf16Storage, Fp32AnglesAreRefusedByName) {
  // The bf16 kernels form angles in double only (the shared refusals: storage16_test.cc).
  const RopeImpl& bf16_kernel = *find_rope("kernel_bf16/scalar");
  RopeSpec spec{8, 8, 10000.0, Layout::interleaved, AnglePrecision::fp32, {}, {}};
  std::vector<std::uint16_t> q(2 * 8), k(2 * 8);
  const std::vector<std::int64_t> positions = {0, 1};
  try {
    bf16_kernel.apply_bf16(spec, {q, 2, 1, 8}, {k, 2, 1, 8}, positions);
    ADD_FAILURE() << "accepted fp32 angles";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("angles not supported"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ropecheck
