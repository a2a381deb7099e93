// Stable row softmax, portable (softmax.h).
#include <cmath>

#include "impls/kernels/softmax.h"

namespace ropecheck::kernels {

void softmax_row_scalar(float* x, std::int64_t n) {
  float max = -INFINITY;
  for (std::int64_t j = 0; j < n; ++j) max = x[j] > max ? x[j] : max;
  if (max == -INFINITY) {  // every score masked: defined as no attention at all
    for (std::int64_t j = 0; j < n; ++j) x[j] = 0.0f;
    return;
  }
  float sum = 0.0f;
  for (std::int64_t j = 0; j < n; ++j) {
    x[j] = std::exp(x[j] - max);
    sum += x[j];
  }
  const float inverse = 1.0f / sum;  // sum >= 1: the max's own term is exp(0)
  for (std::int64_t j = 0; j < n; ++j) x[j] *= inverse;
}

}  // namespace ropecheck::kernels
