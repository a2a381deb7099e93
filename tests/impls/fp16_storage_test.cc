// fp16 storage, what only fp16 has: the portable conversion (round to nearest even, subnormals
// kept, overflow to Inf, NaN kept), checked on every fp16 value and midpoint and against the
// compiler's own _Float16; subnormal results kept, not flushed; the SIMD levels agree with the
// portable one but for FMA-rounding ties. The checks fp16 shares with bf16: storage16_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/errors.h"
#include "impls/oracle/oracle.h"
#include "impls/registry.h"
#include "core/tolerance.h"
#include "tests/support/rotary_elements.h"
#include "tests/support/storage16.h"
#include "tests/support/test_config.h"

namespace ropecheck {
namespace {

std::uint16_t fp16_bits(float f) { return fp16_from_float(f).bits; }

TEST(Fp16Conversion, KnownValues) {
  EXPECT_EQ(fp16_bits(1.0f), 0x3C00);
  EXPECT_EQ(fp16_bits(-2.0f), 0xC000);
  EXPECT_EQ(fp16_bits(-0.0f), 0x8000);
  EXPECT_EQ(fp16_bits(kFp16Max), 0x7BFF);
  EXPECT_EQ(fp16_bits(65519.996f), 0x7BFF);  // just below the midpoint to 2^16: stays finite
  EXPECT_EQ(fp16_bits(65520.0f), 0x7C00);    // the midpoint ties to the even "2^16": Inf
  EXPECT_EQ(fp16_bits(std::numeric_limits<float>::max()), 0x7C00);
  EXPECT_EQ(fp16_bits(-INFINITY), 0xFC00);
  EXPECT_EQ(fp16_bits(kFp16MinNormal), 0x0400);
  EXPECT_EQ(fp16_bits(0x1p-24f), 0x0001);            // the smallest subnormal
  EXPECT_EQ(fp16_bits(0x1p-25f), 0x0000);            // half of it ties to even: zero
  EXPECT_EQ(fp16_bits(0x1.000002p-25f), 0x0001);     // above the tie
  EXPECT_EQ(fp16_bits(0x1.8p-24f), 0x0002);          // 1.5 units ties to 2
  EXPECT_EQ(fp16_bits(0x1.4p-23f), 0x0002);          // 2.5 units ties to 2
  EXPECT_EQ(fp16_bits(0x1.FFCp-15f), 0x0400);        // 1023.5 units rounds up into the normals
  EXPECT_EQ(fp16_bits(std::numeric_limits<float>::denorm_min()), 0x0000);
  // NaNs stay NaNs, quiet, with their sign (a signalling payload must not become Inf).
  for (const std::uint32_t nan : {0x7F800001u, 0x7FC00000u, 0xFFFFFFFFu, 0x7F802000u}) {
    const std::uint16_t h = fp16_bits(std::bit_cast<float>(nan));
    EXPECT_TRUE(std::isnan(float_from_fp16({h}))) << std::hex << nan;
    EXPECT_EQ(h & 0x0200, 0x0200) << std::hex << nan;  // quiet bit
    EXPECT_EQ(h >> 15, nan >> 31) << std::hex << nan;
  }
  EXPECT_EQ(float_from_fp16({0x7C00}), INFINITY);
  EXPECT_EQ(float_from_fp16({0x0001}), 0x1p-24f);
  EXPECT_EQ(float_from_fp16({0x83FF}), -0x1.FF8p-15f);  // the largest subnormal, negative
}

TEST(Fp16Conversion, EveryFp16RoundTripsAndEveryMidpointTiesToEven) {
  for (std::uint32_t h = 0; h <= 0xFFFF; ++h) {
    const float f = float_from_fp16({static_cast<std::uint16_t>(h)});
    if (std::isnan(f)) continue;
    ASSERT_EQ(fp16_bits(f), h) << "fp16 " << h << " did not round-trip";
    if ((h & 0x7FFF) >= 0x7BFF) continue;  // the next one up is Inf (checked above)
    // Halfway to the next fp16 up in magnitude (exact in fp32), and one fp32 ulp either side.
    const float next = float_from_fp16({static_cast<std::uint16_t>(h + 1)});
    const float mid = (f + next) / 2;
    const std::uint32_t even = (h & 1) ? h + 1 : h;
    EXPECT_EQ(fp16_bits(mid), even) << h;
    EXPECT_EQ(fp16_bits(std::bit_cast<float>(std::bit_cast<std::uint32_t>(mid) - 1)), h) << h;
    EXPECT_EQ(fp16_bits(std::bit_cast<float>(std::bit_cast<std::uint32_t>(mid) + 1)), h + 1) << h;
  }
}

#if defined(__aarch64__) || defined(__FLT16_MAX__)
// The compiler's half type (x86: _Float16, libgcc's or F16C's conversion; aarch64: __fp16, the
// hardware's fcvt): an independent rounding.
#if defined(__aarch64__)
using CompilersHalf = __fp16;
#else
using CompilersHalf = _Float16;
#endif
TEST(Fp16Conversion, AgreesWithTheCompilersFloat16) {
  for (std::uint64_t bits = 0; bits <= 0xFFFFFFFFu; bits += 4099) {
    const float f = std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    if (std::isnan(f)) continue;
    const CompilersHalf theirs = static_cast<CompilersHalf>(f);
    std::uint16_t their_bits;
    std::memcpy(&their_bits, &theirs, sizeof their_bits);
    ASSERT_EQ(fp16_bits(f), their_bits) << std::hexfloat << f;
    ASSERT_EQ(std::bit_cast<std::uint32_t>(float_from_fp16({their_bits})), std::bit_cast<std::uint32_t>(static_cast<float>(theirs)));
  }
}
#endif

std::vector<const RopeImpl*> fp16_levels() { return test::implementations_storing(StorageType::fp16); }

class Fp16Level : public ::testing::TestWithParam<const RopeImpl*> {};

TEST_P(Fp16Level, SubnormalResultsAreKeptNotFlushed) {
  const RopeImpl& impl = *GetParam();
  if (!impl.capabilities().available) GTEST_SKIP() << impl.capabilities().unavailable_reason;
  // Pair 0 has theta 1: at position 1, (2^-14, 0) becomes (cos 1, sin 1) * 2^-14, both
  // subnormal (553.3 and 861.7 units of 2^-24). A kernel flushing them would write zeros.
  const RopeSpec spec{16, 16, 10000.0, Layout::interleaved, AnglePrecision::fp64, {}, {}};
  std::vector<Fp16> q(16, Fp16{0}), k(16, Fp16{0});
  q[0] = fp16_from_float(kFp16MinNormal);
  const std::vector<std::int64_t> positions = {1};
  impl.apply_fp16(spec, {q, 1, 1, 16}, {k, 1, 1, 16}, positions);
  EXPECT_EQ(q[0].bits, fp16_bits(static_cast<float>(std::cos(1.0) * 0x1p-14))) << impl.id();
  EXPECT_EQ(q[1].bits, fp16_bits(static_cast<float>(std::sin(1.0) * 0x1p-14))) << impl.id();
  EXPECT_EQ(q[0].bits, 553);
  EXPECT_EQ(q[1].bits, 862);
}

INSTANTIATE_TEST_SUITE_P(EveryLevel, Fp16Level, ::testing::ValuesIn(fp16_levels()),
                         [](const ::testing::TestParamInfo<const RopeImpl*>& info) {
                           return test_name(std::string(info.param->id()));
                         });

TEST(Fp16Storage, Fp16BuffersAreNotBf16AndPositionsAreChecked) {
  // What fp16 adds to the shared refusals of storage16_test.cc.
  const RopeImpl& fp16_kernel = *find_rope("kernel_fp16/scalar");
  const RopeSpec spec{8, 8, 10000.0, Layout::interleaved, AnglePrecision::fp64, {}, {}};
  std::vector<Fp16> q(2 * 8), k(2 * 8);
  std::vector<std::uint16_t> q16(2 * 8), k16(2 * 8);
  const std::vector<std::int64_t> positions = {0, 1};
  const auto expect_refused = [&](auto&& call, const std::string& says) {
    try {
      call();
      ADD_FAILURE() << "accepted: " << says;
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  expect_refused([&] { fp16_kernel.apply_bf16(spec, {q16, 2, 1, 8}, {k16, 2, 1, 8}, positions); },
                 "stores fp16, not bf16");
  const std::vector<std::int64_t> absurd = {0, std::int64_t{1} << 40};
  expect_refused([&] { fp16_kernel.apply_fp16(spec, {q, 2, 1, 8}, {k, 2, 1, 8}, absurd); },
                 "outside [-2^24, 2^24]");
}

}  // namespace
}  // namespace ropecheck
