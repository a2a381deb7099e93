// softmax_row runs the kernel of the level it is given, bit for bit: the scalar level on every
// CPU, AVX-512 only where it is asked for (a CPU without it cannot execute that kernel); on
// aarch64 the NEON level likewise.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/isa.h"
#include "impls/attention/attention.h"
#include "impls/kernels/softmax.h"

namespace ropecheck {
namespace {

// 37 scores: two full AVX-512 vectors and a masked tail, spread over [-9, 9].
std::vector<float> softmax_scores() {
  std::vector<float> row(37);
  for (std::size_t j = 0; j < row.size(); ++j) row[j] = 9.0f * std::sin(0.7f * static_cast<float>(j));
  return row;
}

std::vector<float> softmax_with(void (*kernel)(float*, std::int64_t)) {
  auto row = softmax_scores();
  kernel(row.data(), static_cast<std::int64_t>(row.size()));
  return row;
}

std::vector<float> softmax_at(Isa level) {
  auto row = softmax_scores();
  softmax_row(row.data(), static_cast<std::int64_t>(row.size()), level);
  return row;
}

TEST(SoftmaxLevels, EachLevelRunsItsOwnKernel) {
  const auto scalar = softmax_with(kernels::softmax_row_scalar);
  EXPECT_EQ(softmax_at(Isa::scalar), scalar);
  std::string why;
#if defined(__x86_64__)
  if (!cpu_supports(Isa::avx2, &why)) GTEST_SKIP() << why;
  const auto avx2 = softmax_with(kernels::softmax_row_avx2);
  EXPECT_EQ(softmax_at(Isa::avx2), avx2);
  // The scalar and SLEEF exp differ in the last bits on these scores: a swapped dispatch shows.
  EXPECT_NE(scalar, avx2);
  if (!cpu_supports(Isa::avx512, &why)) GTEST_SKIP() << why;
  const auto avx512 = softmax_with(kernels::softmax_row_avx512);
  EXPECT_EQ(softmax_at(Isa::avx512), avx512);
  EXPECT_NE(scalar, avx512);
#elif defined(__aarch64__)
  if (!cpu_supports(Isa::neon, &why)) GTEST_SKIP() << why;
  const auto neon = softmax_with(kernels::softmax_row_neon);
  EXPECT_EQ(softmax_at(Isa::neon), neon);
  EXPECT_NE(scalar, neon);
  if (!cpu_supports(Isa::sve, &why)) GTEST_SKIP() << why;
  const auto sve = softmax_with(kernels::softmax_row_sve);
  EXPECT_EQ(softmax_at(Isa::sve), sve);
  EXPECT_NE(scalar, sve);
#endif
}

// Rows up to 145 scores: the AVX-512 max pass's four-vector steps (64 scores), its single
// vectors after them and a tail, and the AVX2 pass's (32, 8) likewise.
constexpr std::int64_t kLongestRow = 2 * 64 + 16 + 1;

// Every vector level against the scalar one on rows of every length up to kLongestRow (the
// max passes' unrolled steps, their single vectors and the masked tail lanes), with masked keys
// (-inf) among them, and a row all masked: within the two exps' and the sums' rounding (below),
// zeros where a key is masked or the whole row is, and nothing written past the row.
TEST(SoftmaxLevels, VectorLevelsAgreeWithScalarOnEveryTail) {
  for (const Isa level : built_levels()) {
    if (level == Isa::scalar || !cpu_supports(level)) continue;
    for (std::int64_t n = 1; n <= kLongestRow; ++n) {
      std::vector<float> row(static_cast<std::size_t>(n) + 8, 123.0f);  // guards past n
      for (std::int64_t j = 0; j < n; ++j) {
        row[static_cast<std::size_t>(j)] = j % 5 == 3 ? -INFINITY : 9.0f * std::sin(0.7f * static_cast<float>(j));
      }
      auto want = row;
      kernels::softmax_row_scalar(want.data(), n);
      softmax_row(row.data(), n, level);
      // Relative to each weight: each exp within 1 ulp of the truth (SLEEF u10; glibc's expf
      // below), the two sums' roundings in different orders n ulp each at most, the scaling one.
      const float bound = static_cast<float>(2 + 2 * n + 2) * std::numeric_limits<float>::epsilon();
      float total = 0;
      for (std::size_t j = 0; j < row.size(); ++j) {
        if (j >= static_cast<std::size_t>(n)) {
          ASSERT_EQ(row[j], 123.0f) << to_string(level) << " n " << n << ": wrote past the row at " << j;
          continue;
        }
        total += row[j];
        ASSERT_NEAR(row[j], want[j], bound * want[j])
            << to_string(level) << " n " << n << " at " << j;
        if (j % 5 == 3) {
          ASSERT_EQ(row[j], 0.0f) << to_string(level) << " n " << n << ": masked key " << j << " weighted";
        }
      }
      // The weights sum to 1 within their own roundings: the level's sum of n exps (n - 1
      // roundings), 1 / sum and each product by it (one each), and this loop's n - 1 additions.
      EXPECT_NEAR(total, 1.0f, static_cast<float>(n + 1) * std::numeric_limits<float>::epsilon())
          << to_string(level) << " n " << n;
    }
    std::vector<float> masked(19, -INFINITY);
    softmax_row(masked.data(), 19, level);
    EXPECT_EQ(masked, std::vector<float>(19, 0.0f)) << to_string(level);
  }
}

// The shift is the row's true max wherever it stands: one score of 100 among zeros takes all the
// weight. A max pass that misses any lane or step shifts by 0, and exp(100) overflows fp32
// (inf / inf: NaN); the rows above, all within +-9, cannot tell a wrong shift from a right one.
TEST(SoftmaxLevels, EveryLevelShiftsByTheRowsMax) {
  for (const Isa level : built_levels()) {
    if (!cpu_supports(level)) continue;
    for (std::int64_t n = 1; n <= kLongestRow; ++n) {
      for (std::int64_t top = 0; top < n; ++top) {
        std::vector<float> row(static_cast<std::size_t>(n), 0.0f);
        row[static_cast<std::size_t>(top)] = 100.0f;
        softmax_row(row.data(), n, level);
        // The others weigh exp(-100) / (1 + (n - 1) exp(-100)): below 4e-44, fp32's subnormals.
        for (std::int64_t j = 0; j < n; ++j) {
          const float w = row[static_cast<std::size_t>(j)];
          if (j == top) {
            ASSERT_EQ(w, 1.0f) << to_string(level) << " n " << n << " max at " << top;
          } else {
            ASSERT_TRUE(w >= 0.0f && w < 1e-43f)
                << to_string(level) << " n " << n << " max at " << top << ": " << w << " at " << j;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace ropecheck
