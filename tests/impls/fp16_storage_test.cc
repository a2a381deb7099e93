// fp16 storage: the portable conversion (round to nearest even, subnormals kept, overflow to Inf,
// NaN kept), checked on every fp16 value and midpoint and against the compiler's own _Float16;
// every fp16 kernel level on fp16 buffers directly (apply_fp16) around the vector tiles, with
// guard elements, against the oracle within tolerance.h's bound (one fp16 rounding, absolute
// below 2^-14); subnormal results kept, not flushed; the SIMD levels agree with the portable one
// but for FMA-rounding ties; bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/errors.h"
#include "impls/oracle/oracle.h"
#include "impls/registry.h"
#include "core/tolerance.h"
#include "tests/support/rotary_elements.h"
#include "tests/support/test_config.h"

namespace ropecheck {
namespace {

float from_bits(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

std::uint32_t to_bits(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

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
    const std::uint16_t h = fp16_bits(from_bits(nan));
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
    EXPECT_EQ(fp16_bits(from_bits(to_bits(mid) - 1)), h) << h;
    EXPECT_EQ(fp16_bits(from_bits(to_bits(mid) + 1)), h + 1) << h;
  }
}

#if defined(__FLT16_MAX__)
// The compiler's _Float16 (libgcc's or F16C's conversion): an independent rounding.
TEST(Fp16Conversion, AgreesWithTheCompilersFloat16) {
  for (std::uint64_t bits = 0; bits <= 0xFFFFFFFFu; bits += 4099) {
    const float f = from_bits(static_cast<std::uint32_t>(bits));
    if (std::isnan(f)) continue;
    const _Float16 theirs = static_cast<_Float16>(f);
    std::uint16_t their_bits;
    std::memcpy(&their_bits, &theirs, sizeof their_bits);
    ASSERT_EQ(fp16_bits(f), their_bits) << std::hexfloat << f;
    ASSERT_EQ(to_bits(float_from_fp16({their_bits})), to_bits(static_cast<float>(theirs)));
  }
}
#endif

std::vector<const RopeImpl*> fp16_levels() { return test::implementations_storing(StorageType::fp16); }

TEST(Fp16Storage, EveryLevelIsListed) {
  // The portable level, AVX2 (F16C) and AVX-512: a lost registry line must not pass silently.
  const auto levels = fp16_levels();
  EXPECT_EQ(std::count_if(levels.begin(), levels.end(),
                          [](const RopeImpl* impl) { return impl->id().starts_with("kernel_fp16/"); }),
            3);
  // and the references on fp16 storage (impls/rope/stored_reference.cc)
  EXPECT_EQ(levels.size(), 3u + 2u);
}

constexpr Fp16 kGuard{0x7A00};  // fp16 49152.0, must survive every kernel

struct Fp16Run {
  std::vector<float> q_in, k_in;  // the fp16 inputs, widened (exact)
  std::vector<Fp16> q, k;         // outputs, then 16 guard elements each
};

// q and k with every magnitude fp16 has: head h scaled by 2^(-6 h), so the last heads of a
// token hold subnormals (down to 2^-24), whose rotation rounds absolutely.
Fp16Run run_fp16(const RopeImpl& impl, const RopeSpec& spec, std::int64_t tokens,
                 std::int64_t q_heads, std::int64_t k_heads,
                 const std::vector<std::int64_t>& positions) {
  const auto fill = [&](std::int64_t heads, float step, std::vector<Fp16>& out, std::vector<float>& in) {
    const auto n = static_cast<std::size_t>(tokens * heads * spec.head_dim);
    out.assign(n + 16, kGuard);
    for (std::size_t j = 0; j < n; ++j) {
      const auto head = static_cast<int>(j / static_cast<std::size_t>(spec.head_dim) %
                                         static_cast<std::size_t>(heads));
      out[j] = fp16_from_float(std::ldexp(std::sin(step * static_cast<float>(j)) * 3.0f, -6 * head));
      in.push_back(float_from_fp16(out[j]));
    }
    return n;
  };
  Fp16Run r;
  const auto qn = fill(q_heads, 0.37f, r.q, r.q_in);
  const auto kn = fill(k_heads, 0.11f, r.k, r.k_in);
  impl.apply_fp16(spec, Fp16HeadTensor{std::span(r.q).first(qn), tokens, q_heads, spec.head_dim},
                  Fp16HeadTensor{std::span(r.k).first(kn), tokens, k_heads, spec.head_dim}, positions);
  return r;
}

class Fp16Level : public ::testing::TestWithParam<const RopeImpl*> {};

TEST_P(Fp16Level, TileRemaindersAgreeWithTheOracle) {
  const RopeImpl& impl = *GetParam();
  const auto caps = impl.capabilities();
  if (!caps.available) GTEST_SKIP() << impl.id() << ": " << caps.unavailable_reason;
  const std::vector<std::int64_t> positions = {0, 1, 4095, -77, 1 << 20};
  const std::int64_t tokens = 5, q_heads = 4, k_heads = 2;
  const double bound = rotation_bound_units({AnglePrecision::fp64, StorageType::fp16}, 0, 0.0);
  double worst = 0, worst_subnormal = 0;
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    for (int rotary = 2; rotary <= 68; rotary += 2) {
      const int head_dim = rotary + (rotary % 6 == 0 ? 6 : 0);  // some with a tail
      const RopeSpec spec{head_dim, rotary, 10000.0, layout, AnglePrecision::fp64, {}};
      const auto r = run_fp16(impl, spec, tokens, q_heads, k_heads, positions);
      for (std::size_t g = 0; g < 16; ++g) {
        ASSERT_EQ(r.q[r.q_in.size() + g].bits, kGuard.bits) << "write past q, rotary_dim " << rotary;
        ASSERT_EQ(r.k[r.k_in.size() + g].bits, kGuard.bits) << "write past k, rotary_dim " << rotary;
      }
      for (const auto& [in, out, heads] : {std::tuple{&r.q_in, &r.q, q_heads}, {&r.k_in, &r.k, k_heads}}) {
        const auto exact = oracle_rope(spec, *in, tokens, heads, positions);
        for (std::size_t j = 0; j < in->size(); ++j) {
          const float y = float_from_fp16((*out)[j]);
          const auto e = test::rotary_element(spec, *in, j);
          if (!e.rotary) {
            ASSERT_EQ(to_bits(y), to_bits((*in)[j])) << "tail changed at feature " << e.feature;
            continue;
          }
          const double norm = e.pair_norm;
          if (norm == 0) {
            ASSERT_EQ(y, 0.0f) << "a zero pair rotated to nonzero at element " << j;
            continue;
          }
          const double error =
              std::abs(y - exact[j]) / (kEps32 * unit_pair_norm(StorageType::fp16, 1.0, norm));
          (norm < kFp16MinNormal ? worst_subnormal : worst) =
              std::max(norm < kFp16MinNormal ? worst_subnormal : worst, error);
          ASSERT_LE(error, bound) << impl.id() << " " << to_string(layout) << " rotary " << rotary
                                  << " element " << j << " |pair| " << norm;
        }
      }
    }
  }
  // The bound is one fp16 rounding: a kernel that rounds correctly uses most of it, on normal
  // and on subnormal pairs alike (unrounded or flushed results would show as ~0 or over 1).
  EXPECT_GT(worst, 0.5 * bound) << "no output needed rounding: is the result stored as fp16?";
  EXPECT_GT(worst_subnormal, 0.5 * bound) << "no subnormal pair needed rounding";
}

TEST_P(Fp16Level, SubnormalResultsAreKeptNotFlushed) {
  const RopeImpl& impl = *GetParam();
  if (!impl.capabilities().available) GTEST_SKIP() << impl.capabilities().unavailable_reason;
  // Pair 0 has theta 1: at position 1, (2^-14, 0) becomes (cos 1, sin 1) * 2^-14, both
  // subnormal (553.3 and 861.7 units of 2^-24). A kernel flushing them would write zeros.
  const RopeSpec spec{16, 16, 10000.0, Layout::interleaved, AnglePrecision::fp64, {}};
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

TEST_P(Fp16Level, AgreesWithThePortableLevel) {
  const RopeImpl& impl = *GetParam();
  if (!impl.capabilities().available) GTEST_SKIP() << impl.capabilities().unavailable_reason;
  const RopeImpl* portable = find_rope("kernel_fp16/scalar");
  ASSERT_NE(portable, nullptr);
  // The same fp32 table; the SIMD levels round each product and then fuse the add (FMA) where
  // the portable level rounds the sum: results may differ in an fp32 ulp, so the fp16 results
  // agree except where that ulp crosses an fp16 rounding boundary, which one fp32 ulp of a
  // product does about once in 2^13 elements. Tile remainders (96 of 128 features rotated,
  // rotary_dim 38) must not cost more.
  const std::vector<std::int64_t> positions = {3, 4096, 123457, 123458};
  std::size_t differ = 0, total = 0;
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    for (const int rotary : {96, 38}) {
      const RopeSpec spec{128, rotary, 500000.0, layout, AnglePrecision::fp64, {}};
      const auto a = run_fp16(*portable, spec, 4, 8, 2, positions);
      const auto b = run_fp16(impl, spec, 4, 8, 2, positions);
      for (std::size_t j = 0; j < a.q.size(); ++j) differ += a.q[j].bits != b.q[j].bits;
      for (std::size_t j = 0; j < a.k.size(); ++j) differ += a.k[j].bits != b.k[j].bits;
      total += a.q.size() + a.k.size();
    }
  }
  EXPECT_LE(differ, total / 1000) << impl.id() << ": " << differ << " of " << total << " differ";
}

TEST(Fp16Storage, BadInputIsRefused) {
  const RopeImpl& fp32_kernel = *find_rope("kernel/scalar");
  const RopeImpl& fp16_kernel = *find_rope("kernel_fp16/scalar");
  const RopeSpec spec{8, 8, 10000.0, Layout::interleaved, AnglePrecision::fp64, {}};
  std::vector<Fp16> q(2 * 8), k(2 * 8), short_k(8);
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
  expect_refused([&] { fp32_kernel.apply_fp16(spec, {q, 2, 1, 8}, {k, 2, 1, 8}, positions); },
                 "stores fp32, not fp16");
  expect_refused([&] { fp16_kernel.apply_bf16(spec, {q16, 2, 1, 8}, {k16, 2, 1, 8}, positions); },
                 "stores fp16, not bf16");
  expect_refused([&] { fp16_kernel.apply_fp16(spec, {q, 2, 1, 8}, {short_k, 2, 1, 8}, positions); },
                 "buffer holds 8 elements");
  RopeSpec odd = spec;
  odd.rotary_dim = 7;
  expect_refused([&] { fp16_kernel.apply_fp16(odd, {q, 2, 1, 8}, {k, 2, 1, 8}, positions); },
                 "rotary_dim");
  const std::vector<std::int64_t> absurd = {0, std::int64_t{1} << 40};
  expect_refused([&] { fp16_kernel.apply_fp16(spec, {q, 2, 1, 8}, {k, 2, 1, 8}, absurd); },
                 "outside [-2^24, 2^24]");
}

}  // namespace
}  // namespace ropecheck
