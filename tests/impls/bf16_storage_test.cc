// bf16 storage: the portable conversion (round to nearest even, NaN kept, overflow to Inf), every
// bf16 kernel level on bf16 buffers directly (apply_bf16) around the vector tiles, with guard
// elements, against the oracle within the bound tolerance.h derives from one bf16 rounding; the
// two AVX-512 roundings (integer ops, vcvtneps2bf16) agree bit for bit; bad bf16 input.
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

TEST(Bf16Conversion, RoundsToNearestEven) {
  EXPECT_EQ(bf16_from_float(1.0f), 0x3F80);
  EXPECT_EQ(bf16_from_float(from_bits(0x3F808000u)), 0x3F80);  // tie, even stays
  EXPECT_EQ(bf16_from_float(from_bits(0x3F818000u)), 0x3F82);  // tie, odd rounds up to even
  EXPECT_EQ(bf16_from_float(from_bits(0x3F808001u)), 0x3F81);  // above the tie
  EXPECT_EQ(bf16_from_float(from_bits(0x3F807FFFu)), 0x3F80);  // below the tie
  EXPECT_EQ(bf16_from_float(-0.0f), 0x8000);
  EXPECT_EQ(bf16_from_float(std::numeric_limits<float>::max()), 0x7F80);  // past the largest: Inf
  EXPECT_EQ(bf16_from_float(kBf16Max), 0x7F7F);
  EXPECT_EQ(bf16_from_float(-INFINITY), 0xFF80);
  // A NaN whose carry would reach the exponent stays a NaN, sign kept.
  const std::uint16_t nan = bf16_from_float(from_bits(0xFFFFFFFFu));
  EXPECT_TRUE(std::isnan(float_from_bf16(nan)));
  EXPECT_EQ(nan & 0x8000, 0x8000);
  EXPECT_TRUE(std::isnan(float_from_bf16(bf16_from_float(from_bits(0x7F800001u)))));  // signalling
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
    EXPECT_EQ(bf16_from_float(from_bits(bits | 0x8000u)), even) << h;
    EXPECT_EQ(bf16_from_float(from_bits(bits | 0x7FFFu)), h) << h;
    EXPECT_EQ(bf16_from_float(from_bits(bits | 0x8001u)), h + 1) << h;
  }
}

std::vector<const RopeImpl*> bf16_levels() { return test::implementations_storing(StorageType::bf16); }

TEST(Bf16Storage, EveryLevelIsListed) {
  // The portable level and both AVX-512 roundings: a lost registry line must not pass silently.
  const auto levels = bf16_levels();
  EXPECT_EQ(std::count_if(levels.begin(), levels.end(),
                          [](const RopeImpl* impl) { return impl->id().starts_with("kernel_bf16/"); }),
            3);
  // and the references on bf16 storage (impls/rope/stored_reference.cc)
  EXPECT_EQ(levels.size(), 3u + 2u);
}

constexpr std::uint16_t kGuard = 0x4B40;  // bf16 12288.0, must survive every kernel

struct Bf16Run {
  std::vector<float> q_in, k_in;  // the bf16 inputs, widened (exact)
  std::vector<std::uint16_t> q, k;  // outputs, then 16 guard elements each
};

Bf16Run run_bf16(const RopeImpl& impl, const RopeSpec& spec, std::int64_t tokens,
                 std::int64_t q_heads, std::int64_t k_heads, const std::vector<std::int64_t>& positions) {
  const auto qn = static_cast<std::size_t>(tokens * q_heads * spec.head_dim);
  const auto kn = static_cast<std::size_t>(tokens * k_heads * spec.head_dim);
  Bf16Run r;
  r.q.assign(qn + 16, kGuard);
  r.k.assign(kn + 16, kGuard);
  for (std::size_t j = 0; j < qn; ++j) r.q[j] = bf16_from_float(std::sin(0.37f * static_cast<float>(j)) * 3.0f);
  for (std::size_t j = 0; j < kn; ++j) r.k[j] = bf16_from_float(std::cos(0.11f * static_cast<float>(j)));
  for (std::size_t j = 0; j < qn; ++j) r.q_in.push_back(float_from_bf16(r.q[j]));
  for (std::size_t j = 0; j < kn; ++j) r.k_in.push_back(float_from_bf16(r.k[j]));
  impl.apply_bf16(spec, Bf16HeadTensor{std::span(r.q).first(qn), tokens, q_heads, spec.head_dim},
                  Bf16HeadTensor{std::span(r.k).first(kn), tokens, k_heads, spec.head_dim}, positions);
  return r;
}

class Bf16Level : public ::testing::TestWithParam<const RopeImpl*> {};

TEST_P(Bf16Level, TileRemaindersAgreeWithTheOracle) {
  const RopeImpl& impl = *GetParam();
  const auto caps = impl.capabilities();
  if (!caps.available) GTEST_SKIP() << impl.id() << ": " << caps.unavailable_reason;
  const std::vector<std::int64_t> positions = {0, 1, 4095, -77, 1 << 20};
  const std::int64_t tokens = 5, q_heads = 4, k_heads = 2;
  const double bound = rotation_bound_units({AnglePrecision::fp64, StorageType::bf16}, 0, 0.0);
  double worst = 0;
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    for (int rotary = 2; rotary <= 68; rotary += 2) {
      const int head_dim = rotary + (rotary % 6 == 0 ? 6 : 0);  // some with a tail
      const RopeSpec spec{head_dim, rotary, 10000.0, layout, AnglePrecision::fp64, {}};
      const auto r = run_bf16(impl, spec, tokens, q_heads, k_heads, positions);
      for (std::size_t g = 0; g < 16; ++g) {
        ASSERT_EQ(r.q[r.q_in.size() + g], kGuard) << "write past q, rotary_dim " << rotary;
        ASSERT_EQ(r.k[r.k_in.size() + g], kGuard) << "write past k, rotary_dim " << rotary;
      }
      for (const auto& [in, out, heads] : {std::tuple{&r.q_in, &r.q, q_heads}, {&r.k_in, &r.k, k_heads}}) {
        const auto exact = oracle_rope(spec, *in, tokens, heads, positions);
        for (std::size_t j = 0; j < in->size(); ++j) {
          const float y = float_from_bf16((*out)[j]);
          const auto e = test::rotary_element(spec, *in, j);
          if (!e.rotary) {
            ASSERT_EQ(y, (*in)[j]) << "tail changed at feature " << e.feature;
            continue;
          }
          const double error = std::abs(y - exact[j]) / (kEps32 * e.pair_norm);
          worst = std::max(worst, error);
          ASSERT_LE(error, bound) << impl.id() << " " << to_string(layout) << " rotary " << rotary
                                  << " element " << j;
        }
      }
    }
  }
  // The bound is one bf16 rounding: a kernel that rounds correctly uses most of it somewhere
  // (an fp32 result left unrounded, or truncated, would show as ~0 or up to 2x).
  EXPECT_GT(worst, 0.5 * bound) << "no output needed rounding: is the result stored as bf16?";
}

INSTANTIATE_TEST_SUITE_P(EveryLevel, Bf16Level, ::testing::ValuesIn(bf16_levels()),
                         [](const ::testing::TestParamInfo<const RopeImpl*>& info) {
                           return test_name(std::string(info.param->id()));
                         });

TEST(Bf16Storage, BothAvx512RoundingsAgreeBitForBit) {
  const RopeImpl* integer = find_rope("kernel_bf16/avx512");
  const RopeImpl* native = find_rope("kernel_bf16/avx512bf16");
  ASSERT_NE(integer, nullptr);
  ASSERT_NE(native, nullptr);
  if (!native->capabilities().available) GTEST_SKIP() << native->capabilities().unavailable_reason;
  // Same fp32 arithmetic, different narrowing instructions: identical for normal results.
  const std::vector<std::int64_t> positions = {3, 4096, 123457};
  for (const Layout layout : {Layout::interleaved, Layout::half_split}) {
    const RopeSpec spec{128, 96, 500000.0, layout, AnglePrecision::fp64, {}};
    const auto a = run_bf16(*integer, spec, 3, 8, 2, positions);
    const auto b = run_bf16(*native, spec, 3, 8, 2, positions);
    EXPECT_EQ(a.q, b.q) << to_string(layout);
    EXPECT_EQ(a.k, b.k) << to_string(layout);
  }
}

TEST(Bf16Storage, BadInputIsRefused) {
  const RopeImpl& fp32_kernel = *find_rope("kernel/scalar");
  const RopeImpl& bf16_kernel = *find_rope("kernel_bf16/scalar");
  const RopeSpec spec{8, 8, 10000.0, Layout::interleaved, AnglePrecision::fp64, {}};
  std::vector<std::uint16_t> q(2 * 8), k(2 * 8), short_k(8);
  const std::vector<std::int64_t> positions = {0, 1};
  const auto expect_refused = [&](const RopeImpl& impl, Bf16HeadTensor qt, Bf16HeadTensor kt,
                                  const RopeSpec& s, const std::string& says) {
    try {
      impl.apply_bf16(s, qt, kt, positions);
      ADD_FAILURE() << "accepted: " << says;
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  expect_refused(fp32_kernel, {q, 2, 1, 8}, {k, 2, 1, 8}, spec, "not bf16");
  expect_refused(bf16_kernel, {q, 2, 1, 8}, {short_k, 2, 1, 8}, spec, "buffer holds 8 elements");
  RopeSpec odd = spec;
  odd.rotary_dim = 7;
  expect_refused(bf16_kernel, {q, 2, 1, 8}, {k, 2, 1, 8}, odd, "rotary_dim");
  RopeSpec fp32_angles = spec;
  fp32_angles.angle_precision = AnglePrecision::fp32;
  expect_refused(bf16_kernel, {q, 2, 1, 8}, {k, 2, 1, 8}, fp32_angles, "angles not supported");
}

}  // namespace
}  // namespace ropecheck
