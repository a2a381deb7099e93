// NaN and Inf in the data propagate through every real RoPE implementation: never a crash, never
// finite garbage, never a change to untouched heads or the pass-through tail; and the largest
// finite values of the storage type overflow to Inf only where the exact result is beyond it.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>

#include "impls/oracle/oracle.h"
#include "impls/registry.h"
#include "tests/support/test_config.h"

namespace ropecheck {
namespace {

constexpr std::int64_t kTokens = 3, kHeads = 2;

RopeSpec partial_spec(const RopeImpl& impl, Layout layout) {
  return {8, 6, 10000.0, layout, impl.capabilities().angle_precisions.front(), {}, {}};
}

std::vector<float> ramp(std::size_t n) {
  std::vector<float> x(n);
  for (std::size_t j = 0; j < n; ++j) x[j] = 0.25f * static_cast<float>(j) - 3.0f;
  return x;
}

std::vector<float> apply_copy(const RopeImpl& impl, const RopeSpec& spec, std::vector<float> x,
                              const std::vector<std::int64_t>& positions) {
  impl.apply(spec, HeadTensor{x, kTokens, kHeads, spec.head_dim}, positions);
  return x;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

class NonFinite : public ::testing::TestWithParam<const RopeImpl*> {};

TEST_P(NonFinite, PropagatesAndStaysContained) {
  const RopeImpl& impl = *GetParam();
  if (!impl.capabilities().available) GTEST_SKIP() << impl.capabilities().unavailable_reason;
  const std::vector<std::int64_t> positions = {0, 7, 100000};
  for (const Layout layout : impl.capabilities().layouts) {
    const RopeSpec spec = partial_spec(impl, layout);
    const auto d = static_cast<std::size_t>(spec.head_dim);
    const auto clean = ramp(static_cast<std::size_t>(kTokens * kHeads) * d);
    auto poisoned = clean;
    // Feature 0 is in pair 0 in both layouts. Row (token 0, head 0): NaN; row (token 2, head 1):
    // -Inf; row (token 1, head 0): a NaN with a payload in the tail (feature 7), the payload
    // bits the storage type holds (bf16 keeps the top 16: 0x7fe5).
    float payload_nan;
    const std::uint32_t bits = 0x7fe5beefu;
    std::memcpy(&payload_nan, &bits, sizeof bits);
    payload_nan = round_to_storage(payload_nan, impl.capabilities().storage);
    poisoned[0 * d + 0] = NAN;
    poisoned[(2 * kHeads + 1) * d + 0] = -INFINITY;
    poisoned[(1 * kHeads + 0) * d + 7] = payload_nan;
    const auto y = apply_copy(impl, spec, poisoned, positions);
    const auto y_clean = apply_copy(impl, spec, clean, positions);

    const std::size_t partner = layout == Layout::interleaved ? 1 : 3;  // pair 0's other feature
    for (const std::size_t row : {std::size_t{0}, std::size_t{2 * kHeads + 1}}) {
      EXPECT_TRUE(!std::isfinite(y[row * d]) || !std::isfinite(y[row * d + partner]))
          << impl.id() << " " << to_string(layout) << ": a non-finite input pair became finite";
    }
    EXPECT_TRUE(same_bits(y[(1 * kHeads + 0) * d + 7], payload_nan))
        << "the tail's NaN payload must pass through bit for bit";
    // Rows without non-finite rotary input match the clean run bit for bit. (Within a row, the
    // pairs beside a NaN keep their bound too: the nonfinite_propagation property checks that.)
    for (std::size_t row = 0; row < static_cast<std::size_t>(kTokens * kHeads); ++row) {
      if (row == 0 || row == 2 * kHeads + 1) continue;
      for (std::size_t j = 0; j < static_cast<std::size_t>(spec.rotary_dim); ++j) {
        EXPECT_TRUE(same_bits(y[row * d + j], y_clean[row * d + j]))
            << impl.id() << " row " << row << " feature " << j << " changed by another row's NaN";
      }
    }
  }
}

TEST_P(NonFinite, LargestFloatsOverflowOnlyWhereTheTruthDoes) {
  const RopeImpl& impl = *GetParam();
  if (!impl.capabilities().available) GTEST_SKIP() << impl.capabilities().unavailable_reason;
  const auto caps = impl.capabilities();
  const RopeSpec spec{4, 4, 10000.0, caps.layouts.front(), caps.angle_precisions.front(), {}, {}};
  // Features of pair 0 and pair 1 in this layout.
  const bool interleaved = spec.layout == Layout::interleaved;
  const std::size_t a0 = 0, b0 = interleaved ? 1 : 2, a1 = interleaved ? 2 : 1, b1 = 3;
  const std::vector<std::int64_t> positions = {0, 1, 3};
  // The largest finite value the implementation stores (FLT_MAX rounds to Inf in bf16 and fp16).
  const float max = storage_max(impl.capabilities().storage);
  std::vector<float> x(static_cast<std::size_t>(kTokens * kHeads) * 4);
  for (std::size_t row = 0; row < x.size() / 4; ++row) {
    x[row * 4 + a0] = max;  // pair 0: (max, max) -> components up to sqrt(2) max
    x[row * 4 + b0] = row % 2 ? max : -max;
    x[row * 4 + a1] = max;  // pair 1: (max, 0) -> always finite
    x[row * 4 + b1] = 0.0f;
  }
  const auto y = apply_copy(impl, spec, x, positions);
  const auto exact = oracle_rope(spec, x, kTokens, kHeads, positions);
  for (std::size_t j = 0; j < y.size(); ++j) {
    EXPECT_FALSE(std::isnan(y[j])) << impl.id() << " element " << j;
    if (std::isinf(y[j])) {
      EXPECT_GT(std::abs(exact[j]), max) << impl.id() << " overflowed at " << j
                                              << " where the exact value is " << exact[j];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryRealImpl, NonFinite,
                         ::testing::ValuesIn(rope_implementations().begin(),
                                             rope_implementations().end()),
                         [](const ::testing::TestParamInfo<const RopeImpl*>& info) {
                           return test_name(std::string(info.param->id()));
                         });

}  // namespace
}  // namespace ropecheck
