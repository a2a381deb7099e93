// Numerically stable row softmax at each ISA level: max, then exp(x - max) and its sum, then a
// scale by 1/sum. Every exponent is <= 0, so nothing overflows; SLEEF's expf (u10, 1 ulp) on the
// vector levels. A row of -inf (every score masked) becomes zeros.
#pragma once

#include <cstdint>

namespace ropecheck::kernels {

void softmax_row_scalar(float* x, std::int64_t n);
void softmax_row_avx2(float* x, std::int64_t n);
void softmax_row_avx512(float* x, std::int64_t n);
#if defined(__aarch64__)
void softmax_row_neon(float* x, std::int64_t n);
void softmax_row_sve(float* x, std::int64_t n);  // any vector length, predicated tail
#endif

}  // namespace ropecheck::kernels
