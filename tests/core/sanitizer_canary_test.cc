// The sanitizer build proves it is one (built into the tests only with ROPECHECK_SANITIZE): a heap
// read one past the end, made in a child process, must end in AddressSanitizer's report. Were the
// flags lost (a preset edited, a toolchain file that drops them), `scripts/test.sh --sanitizers`
// would pass everything and find nothing; this test fails instead.
#include <gtest/gtest.h>

#include <cstddef>
#include <memory>

namespace ropecheck {
namespace {

// Reads element `n` of an array of `n`: the off-by-one a kernel's tail loop makes.
int read_one_past_the_end(std::size_t n) {
  const auto values = std::make_unique<int[]>(n);
  volatile const int* p = values.get();
  return p[n];
}

TEST(SanitizerCanary, AHeapReadOnePastTheEndIsReported) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(read_one_past_the_end(16), "AddressSanitizer: heap-buffer-overflow");
}

}  // namespace
}  // namespace ropecheck
