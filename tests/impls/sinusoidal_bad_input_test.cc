// A bad sinusoidal spec is refused with InvalidInput naming the problem, by every sinusoidal
// table (real and mutant), before it computes; the edges just inside are accepted.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/errors.h"
#include "impls/registry.h"

namespace ropecheck {
namespace {

std::vector<const SinusoidalImpl*> every_sinusoidal_impl() {
  std::vector<const SinusoidalImpl*> all(sinusoidal_implementations().begin(),
                                         sinusoidal_implementations().end());
  all.insert(all.end(), sinusoidal_mutants().begin(), sinusoidal_mutants().end());
  return all;
}

void expect_sinusoidal_refused(const SinusoidalImpl& impl, SinusoidalSpec spec,
                               const std::string& expected) {
  const std::vector<std::int64_t> positions = {0, 1, 2};
  try {
    impl.table(spec, positions);
    ADD_FAILURE() << impl.id() << " accepted d_model " << spec.d_model << ", base " << spec.base;
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos)
        << impl.id() << ": '" << e.what() << "' does not mention '" << expected << "'";
  }
}

TEST(SinusoidalBadInput, BaseMustBeFiniteAndAboveOne) {
  // base <= 1 makes every frequency 1 or growing with i: no longer a geometric fall from 1.
  for (const SinusoidalImpl* impl : every_sinusoidal_impl()) {
    for (double base : {std::nan(""), std::numeric_limits<double>::infinity(), 1.0, 0.5, 0.0,
                        -0.5, -10000.0}) {
      expect_sinusoidal_refused(*impl, SinusoidalSpec{8, base}, "base");
    }
    const auto table = impl->table(SinusoidalSpec{8, std::nextafter(1.0, 2.0)},
                                   std::vector<std::int64_t>{0, 5});
    EXPECT_EQ(table.size(), 16u) << impl->id();
  }
}

TEST(SinusoidalBadInput, DModelMustBeEvenAndPositive) {
  for (const SinusoidalImpl* impl : every_sinusoidal_impl()) {
    for (int d_model : {0, -2, 3}) expect_sinusoidal_refused(*impl, SinusoidalSpec{d_model, 10000.0}, "d_model");
  }
}

}  // namespace
}  // namespace ropecheck
