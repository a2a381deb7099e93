// Stable row softmax with aarch64 NEON (softmax.h): 4 lanes, SLEEF expf4 (u10), the tail (under 4
// scores) through a stack buffer padded with -inf, whose exp is 0: NEON has no masked loads or
// stores, and the padding then adds nothing to the max or the sum. No C++ library headers: this
// file's flags must not leak into inline code shared with other files.
// Napkin math: three passes over the row (max; exp and sum; scale), 4 scores a vector; the exp's
// polynomial is most of the time, as on the x86 levels.
#include <arm_neon.h>
#include <sleef.h>

#include "impls/kernels/softmax.h"

namespace ropecheck::kernels {
namespace {

// The last n - whole (< 4) scores in a vector, the lanes past them -inf.
float32x4_t load_tail(const float* x, std::int64_t count) {
  float buffer[4] = {-__builtin_inff(), -__builtin_inff(), -__builtin_inff(), -__builtin_inff()};
  for (std::int64_t j = 0; j < count; ++j) buffer[j] = x[j];
  return vld1q_f32(buffer);
}

void store_tail(float* x, float32x4_t v, std::int64_t count) {
  float buffer[4];
  vst1q_f32(buffer, v);
  for (std::int64_t j = 0; j < count; ++j) x[j] = buffer[j];
}

// The row's max: four running maxima over the whole vectors (one fmax chain waits its latency
// every 4 scores), the tail padded with -inf; exact in any order.
float max_of(const float* x, std::int64_t n, std::int64_t whole) {
  const float32x4_t minus_inf = vdupq_n_f32(-__builtin_inff());
  float32x4_t max = minus_inf, max1 = minus_inf, max2 = minus_inf, max3 = minus_inf;
  std::int64_t j = 0;
  for (; j + 16 <= whole; j += 16) {
    max = vmaxq_f32(max, vld1q_f32(x + j));
    max1 = vmaxq_f32(max1, vld1q_f32(x + j + 4));
    max2 = vmaxq_f32(max2, vld1q_f32(x + j + 8));
    max3 = vmaxq_f32(max3, vld1q_f32(x + j + 12));
  }
  for (; j < whole; j += 4) max = vmaxq_f32(max, vld1q_f32(x + j));
  if (whole < n) max = vmaxq_f32(max, load_tail(x + whole, n - whole));
  return vmaxvq_f32(vmaxq_f32(vmaxq_f32(max, max1), vmaxq_f32(max2, max3)));
}

}  // namespace

void softmax_row_neon(float* x, std::int64_t n) {
  const std::int64_t whole = n / 4 * 4;
  const float row_max = max_of(x, n, whole);
  if (row_max == -__builtin_inff()) {  // every score masked: defined as no attention at all
    for (std::int64_t j = 0; j < n; ++j) x[j] = 0.0f;
    return;
  }
  const float32x4_t shift = vdupq_n_f32(row_max);
  float32x4_t sum = vdupq_n_f32(0.0f);
  for (std::int64_t j = 0; j < whole; j += 4) {
    const float32x4_t e = Sleef_expf4_u10advsimd(vsubq_f32(vld1q_f32(x + j), shift));
    sum = vaddq_f32(sum, e);
    vst1q_f32(x + j, e);
  }
  if (whole < n) {  // the padding's exp(-inf - max) is 0: lanes past n add nothing
    const float32x4_t e = Sleef_expf4_u10advsimd(vsubq_f32(load_tail(x + whole, n - whole), shift));
    sum = vaddq_f32(sum, e);
    store_tail(x + whole, e, n - whole);
  }
  const float32x4_t inverse = vdupq_n_f32(1.0f / vaddvq_f32(sum));  // sum >= 1: the max's own term
  for (std::int64_t j = 0; j < whole; j += 4) vst1q_f32(x + j, vmulq_f32(vld1q_f32(x + j), inverse));
  if (whole < n) store_tail(x + whole, vmulq_f32(load_tail(x + whole, n - whole), inverse), n - whole);
}

}  // namespace ropecheck::kernels
