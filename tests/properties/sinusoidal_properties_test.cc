// Every sinusoidal property on every real sinusoidal implementation, plus golden values of the
// table. A failure prints the shrunk counterexample and the RC_PARAMS string that replays it.
#include <gtest/gtest.h>

#include <cmath>

#include "properties/catalogue.h"
#include "core/errors.h"
#include "impls/registry.h"
#include "tests/support/property_case.h"
#include "tests/support/test_config.h"

namespace ropecheck {
namespace {

using SinusoidalCase = PropertyCase<SinusoidalImpl>;

std::vector<SinusoidalCase> all_sinusoidal_cases() {
  std::vector<SinusoidalCase> cases;
  for (const SinusoidalImpl* impl : sinusoidal_implementations()) {
    for (const Property& property : sinusoidal_properties()) cases.push_back({impl, &property});
  }
  return cases;
}

class SinusoidalProperty : public ::testing::TestWithParam<SinusoidalCase> {};

TEST_P(SinusoidalProperty, Holds) {
  const auto [impl, property] = GetParam();
  const Subject subject{std::string(impl->id()), nullptr, impl, false, nullptr};
  const auto result = run_property(*property, subject, test_run_config());
  ASSERT_NE(result.status, Status::skipped) << result.message;
  EXPECT_EQ(result.status, Status::passed) << describe_failure(result);
  EXPECT_GT(result.cases, 0);
  RecordProperty("worst_ratio", std::to_string(result.worst_ratio));
}

INSTANTIATE_TEST_SUITE_P(ImplsAndProperties, SinusoidalProperty, ::testing::ValuesIn(all_sinusoidal_cases()),
                         property_case_name<SinusoidalImpl>);

// Golden values, computed by hand: d = 4, base 10000, pos 2: w = (1, 0.01).
TEST(SinusoidalGolden, SmallTableByHand) {
  for (const SinusoidalImpl* impl : sinusoidal_implementations()) {
    const std::int64_t pos[] = {2};
    const auto pe = impl->table({4, 10000.0}, pos);
    ASSERT_EQ(pe.size(), 4u);
    EXPECT_NEAR(pe[0], 0.9092974268, 1e-6) << impl->id();   // sin 2
    EXPECT_NEAR(pe[1], -0.4161468365, 1e-6) << impl->id();  // cos 2
    EXPECT_NEAR(pe[2], 0.0199986667, 1e-6) << impl->id();   // sin 0.02
    EXPECT_NEAR(pe[3], 0.9998000067, 1e-6) << impl->id();   // cos 0.02
  }
}

TEST(SinusoidalGolden, FrequenciesFallGeometrically) {
  // Seeds 000/003: the frequency falls as the dimension index grows, geometrically by
  // base^(-2/d), so wavelengths 2 pi / w_i run from 2 pi to 2 pi base^((d-2)/d). Read back from
  // PE(1): w_i = atan2(PE(1, 2i), PE(1, 2i+1)).
  const int d = 16;
  for (const SinusoidalImpl* impl : sinusoidal_implementations()) {
    const std::int64_t one[] = {1};
    const auto pe = impl->table({d, 10000.0}, one);
    std::vector<double> w(d / 2);
    for (int i = 0; i < d / 2; ++i) w[static_cast<std::size_t>(i)] = std::atan2(pe[2 * static_cast<std::size_t>(i)], pe[2 * static_cast<std::size_t>(i) + 1]);
    EXPECT_NEAR(2 * M_PI / w.front(), 2 * M_PI, 1e-5) << impl->id();
    EXPECT_NEAR(2 * M_PI / w.back() / (2 * M_PI * std::pow(10000.0, (d - 2.0) / d)), 1.0, 1e-3)
        << impl->id();
    for (std::size_t i = 1; i < w.size(); ++i) {
      EXPECT_NEAR(w[i] / w[i - 1], std::pow(10000.0, -2.0 / d), 1e-3) << impl->id() << " pair " << i;
    }
  }
}

TEST(SinusoidalBadInput, RejectedWithReason) {
  const SinusoidalImpl& impl = *sinusoidal_implementations().front();
  const std::int64_t pos[] = {1};
  EXPECT_THROW(impl.table({3, 10000.0}, pos), InvalidInput);
  EXPECT_THROW(impl.table({0, 10000.0}, pos), InvalidInput);
  EXPECT_THROW(impl.table({4, NAN}, pos), InvalidInput);
  EXPECT_THROW(impl.table({4, 1.0}, pos), InvalidInput);
  EXPECT_THROW(impl.table({4, 10000.0}, std::span<const std::int64_t>{}), InvalidInput);
  const std::int64_t absurd[] = {std::int64_t{1} << 40};
  EXPECT_THROW(impl.table({4, 10000.0}, absurd), InvalidInput);
  std::vector<float> too_small(3);
  EXPECT_THROW(impl.table({4, 10000.0}, pos, too_small), InvalidInput);
  try {
    impl.table({3, 10000.0}, pos);
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("d_model"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ropecheck
