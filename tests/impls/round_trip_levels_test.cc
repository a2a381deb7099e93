// The 16-bit kernels' conversions alone (impls/kernels/round_trip_levels.h), the bench's ceilings:
// one for each 16-bit kernel level, and each gives every bit pattern back as the kernel's own
// rounding leaves an exact value (storage.h's), converting every one of its n elements and touching
// nothing past them.
#include "impls/kernels/round_trip_levels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/storage.h"
#include "impls/registry.h"

namespace ropecheck::kernels {
namespace {

// What storage.h's rounding makes of the pattern's exact value: itself, a NaN made quiet; and
// with vcvtneps2bf16 (rope_kernel.h) a subnormal flushed to its signed zero.
std::uint16_t expected(const RoundTripLevel& level, std::uint16_t bits) {
  if (level.storage == StorageType::fp16) return fp16_from_float(float_from_fp16(Fp16{bits})).bits;
  const bool subnormal = (bits & 0x7F80) == 0 && (bits & 0x007F) != 0;
  if (level.needs_avx512_bf16 && subnormal) return bits & 0x8000;
  return bf16_from_float(float_from_bf16(bits));
}

void run(const RoundTripLevel& level, std::uint16_t* x, std::int64_t n) {
  if (level.storage == StorageType::fp16) {
    level.fp16(reinterpret_cast<Fp16*>(x), n);
  } else {
    level.bf16(x, n);
  }
}

TEST(RoundTripLevels, OneForEach16BitKernelLevel) {
  std::vector<std::string> kernels;
  for (const RopeImpl* impl : rope_implementations()) {
    const std::string id(impl->id());
    if ((id.starts_with("kernel_bf16/") || id.starts_with("kernel_fp16/")) && !id.ends_with("/scalar")) {
      kernels.push_back(id);
    }
  }
  ASSERT_EQ(kernels.size(), round_trip_levels().size());
  for (const RoundTripLevel& level : round_trip_levels()) {
    SCOPED_TRACE(std::string(level.id));
    EXPECT_EQ(std::count(kernels.begin(), kernels.end(), std::string(level.kernel_id)), 1);
    EXPECT_EQ("conversion" + std::string(level.kernel_id.substr(6)), level.id);
    EXPECT_EQ(level.storage == StorageType::fp16, level.kernel_id.starts_with("kernel_fp16/"));
    EXPECT_EQ(level.fp16 != nullptr, level.storage == StorageType::fp16);
    EXPECT_EQ(level.bf16 != nullptr, level.storage == StorageType::bf16);
  }
}

TEST(RoundTripLevels, EveryBitPatternComesBackAsTheKernelRoundsIt) {
  for (const RoundTripLevel& level : round_trip_levels()) {
    if (!level.available()) continue;  // every level this CPU runs
    SCOPED_TRACE(std::string(level.id));
    std::vector<std::uint16_t> x(1 << 16);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<std::uint16_t>(i);
    run(level, x.data(), static_cast<std::int64_t>(x.size()));
    int wrong = 0;
    for (std::size_t i = 0; i < x.size() && wrong < 5; ++i) {
      const auto want = expected(level, static_cast<std::uint16_t>(i));
      if (x[i] != want) {
        ++wrong;
        ADD_FAILURE() << std::hex << "0x" << i << " came back as 0x" << x[i] << ", not 0x" << want;
      }
    }
  }
}

// Signalling NaNs, which a round trip makes quiet, at even places (an element skipped shows),
// normal values between them (an element moved shows).
std::uint16_t remainder_input(const RoundTripLevel& level, std::int64_t i) {
  if (i % 2 == 1) return static_cast<std::uint16_t>(0x3C00 + 37 * i);
  const auto payload = static_cast<std::uint16_t>(1 + i % 31);  // below both formats' quiet bit
  return static_cast<std::uint16_t>((level.storage == StorageType::fp16 ? 0x7C00 : 0x7F80) | payload);
}

TEST(RoundTripLevels, RemaindersConvertEveryElementAndStayInside) {
  for (const RoundTripLevel& level : round_trip_levels()) {
    if (!level.available()) continue;
    SCOPED_TRACE(std::string(level.id));
    // A signalling NaN: a round trip makes it quiet, so even a write of what was read shows.
    const std::uint16_t kGuard = level.storage == StorageType::fp16 ? 0x7C01 : 0x7F81;
    ASSERT_NE(expected(level, kGuard), kGuard);
    for (std::int64_t n = 0; n <= 100; ++n) {
      // one element in: not aligned to a vector; guards before and after
      std::vector<std::uint16_t> x(static_cast<std::size_t>(n) + 72, kGuard);
      for (std::int64_t i = 0; i < n; ++i) x[static_cast<std::size_t>(i) + 1] = remainder_input(level, i);
      run(level, x.data() + 1, n);
      EXPECT_EQ(x[0], kGuard) << "n " << n;
      for (std::int64_t i = 0; i < n; ++i) {
        const std::uint16_t in = remainder_input(level, i);
        ASSERT_EQ(x[static_cast<std::size_t>(i) + 1], expected(level, in)) << "n " << n << " at " << i;
        if (i % 2 == 0) {
          ASSERT_NE(expected(level, in), in) << "an input a round trip leaves alone";
        }
      }
      for (std::size_t at = static_cast<std::size_t>(n) + 1; at < x.size(); ++at) {
        ASSERT_EQ(x[at], kGuard) << "n " << n << ": element " << at - 1 << " past the end written";
      }
    }
  }
}

}  // namespace
}  // namespace ropecheck::kernels
