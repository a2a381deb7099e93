// softmax_row runs the kernel of the level it is given, bit for bit: the scalar level on every
// CPU, AVX-512 only where it is asked for (a CPU without it cannot execute that kernel).
#include <gtest/gtest.h>

#include <cmath>
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
  if (!cpu_supports(Isa::avx512, &why)) GTEST_SKIP() << why;
  const auto avx512 = softmax_with(kernels::softmax_row_avx512);
  EXPECT_EQ(softmax_at(Isa::avx512), avx512);
  // The two kernels' exp differ in the last bits on these scores: a swapped dispatch shows.
  EXPECT_NE(scalar, avx512);
}

}  // namespace
}  // namespace ropecheck
