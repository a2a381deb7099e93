// The learned absolute-position table (seed 001): lookup by position, broadcast over the batch,
// reproducible initialisation, and bad input refused with a reason.
#include <gtest/gtest.h>

#include "impls/sinusoidal/absolute_encoding.h"
#include "core/errors.h"

namespace ropecheck {
namespace {

TEST(LearnedPositionTable, LookupReturnsTheRows) {
  std::vector<float> w(5 * 3);
  for (std::size_t j = 0; j < w.size(); ++j) w[j] = static_cast<float>(j);
  const LearnedPositionTable table(5, 3, w);
  const std::int64_t positions[] = {4, 0, 4, 2};
  const std::vector<float> want = {12, 13, 14, 0, 1, 2, 12, 13, 14, 6, 7, 8};
  EXPECT_EQ(table.lookup(positions), want);
}

TEST(LearnedPositionTable, AddToBroadcastsOverTheBatch) {
  const LearnedPositionTable table(16, 4, 7);
  const std::int64_t positions[] = {3, 9};
  std::vector<float> x(3 * 2 * 4);
  for (std::size_t j = 0; j < x.size(); ++j) x[j] = 0.5f * static_cast<float>(j);
  const auto before = x;
  table.add_to(x, 3, positions);
  for (std::size_t b = 0; b < 3; ++b) {
    for (std::size_t t = 0; t < 2; ++t) {
      const auto row = table.row(positions[t]);
      for (std::size_t j = 0; j < 4; ++j) {
        const std::size_t at = (b * 2 + t) * 4 + j;
        EXPECT_EQ(x[at], before[at] + row[j]) << "batch " << b << " token " << t;
      }
    }
  }
}

TEST(LearnedPositionTable, SeededInitialisation) {
  const LearnedPositionTable a(8, 4, 1), b(8, 4, 1), c(8, 4, 2);
  EXPECT_EQ(a.lookup(std::vector<std::int64_t>{0, 7}), b.lookup(std::vector<std::int64_t>{0, 7}));
  EXPECT_NE(a.lookup(std::vector<std::int64_t>{0, 7}), c.lookup(std::vector<std::int64_t>{0, 7}));
  // N(0, 1): over 4096 draws the mean is within 5 standard errors of 0 and the variance near 1.
  const LearnedPositionTable big(1024, 4, 3);
  double sum = 0, sum_sq = 0;
  for (std::int64_t p = 0; p < 1024; ++p) {
    for (float v : big.row(p)) {
      sum += v;
      sum_sq += static_cast<double>(v) * v;
    }
  }
  EXPECT_NEAR(sum / 4096, 0.0, 5.0 / 64);
  EXPECT_NEAR(sum_sq / 4096, 1.0, 0.15);
}

TEST(LearnedPositionTable, BadInputIsRefused) {
  const LearnedPositionTable table(4, 2, 1);
  EXPECT_THROW(table.row(4), InvalidInput);
  EXPECT_THROW(table.row(-1), InvalidInput);
  EXPECT_THROW(table.lookup(std::vector<std::int64_t>{0, 99}), InvalidInput);
  std::vector<float> x(5);
  EXPECT_THROW(table.add_to(x, 1, std::vector<std::int64_t>{0, 1}), InvalidInput);
  std::vector<float> ok(4, 0.0f);
  EXPECT_THROW(table.add_to(ok, 1, std::vector<std::int64_t>{0, 7}), InvalidInput);
  EXPECT_EQ(ok, std::vector<float>(4, 0.0f)) << "a refused add_to must not touch x";
  EXPECT_THROW(LearnedPositionTable(0, 2, 1), InvalidInput);
  EXPECT_THROW(LearnedPositionTable(2, 2, std::vector<float>(3)), InvalidInput);
  try {
    table.row(4);
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("outside the learned table"), std::string::npos);
  }
}

}  // namespace
}  // namespace ropecheck
