// Stable row softmax with SVE (softmax.h), vector-length agnostic: svcntw() lanes a step, the
// last vector predicated by svwhilelt (nothing read or written past n), SLEEF's expf (u10) on
// whole vectors. No C++ library headers: this file's flags must not leak into inline code shared
// with other files.
// Napkin math, per score: three passes over the row (max; exp and sum, storing e; the scale), so
// 3 loads and 2 stores of 4 bytes, about 20 flops in expf; a row of 4096 scores is 16 KiB, in L1.
#include <arm_sve.h>
#include <sleef.h>

#include "impls/kernels/softmax.h"

namespace ropecheck::kernels {
namespace {

// The row's max: two running maxima over pairs of vectors (one chain waits fmax's latency every
// vector), inactive lanes kept at -inf by the merging max; exact in any order.
float max_of(const float* x, std::int64_t n) {
  const auto vl = static_cast<std::int64_t>(svcntw());
  const svbool_t all = svptrue_b32();
  svfloat32_t max0 = svdup_n_f32(-__builtin_inff()), max1 = max0;
  std::int64_t j = 0;
  for (; j + 2 * vl <= n; j += 2 * vl) {
    max0 = svmax_f32_x(all, max0, svld1_f32(all, x + j));
    max1 = svmax_f32_x(all, max1, svld1_f32(all, x + j + vl));
  }
  for (; j < n; j += vl) {
    const svbool_t lanes = svwhilelt_b32(j, n);
    max0 = svmax_f32_m(lanes, max0, svld1_f32(lanes, x + j));
  }
  return svmaxv_f32(all, svmax_f32_x(all, max0, max1));
}

}  // namespace

void softmax_row_sve(float* x, std::int64_t n) {
  const auto vl = static_cast<std::int64_t>(svcntw());
  const float row_max = max_of(x, n);
  if (row_max == -__builtin_inff()) {
    for (std::int64_t j = 0; j < n; j += vl) svst1_f32(svwhilelt_b32(j, n), x + j, svdup_n_f32(0.0f));
    return;
  }
  svfloat32_t sum = svdup_n_f32(0.0f);
  for (std::int64_t j = 0; j < n; j += vl) {
    const svbool_t lanes = svwhilelt_b32(j, n);
    const svfloat32_t e = Sleef_expfx_u10sve(svsub_n_f32_x(lanes, svld1_f32(lanes, x + j), row_max));
    sum = svadd_f32_m(lanes, sum, e);  // the inactive lanes' exp (of garbage) never added
    svst1_f32(lanes, x + j, e);
  }
  const float inverse = 1.0f / svaddv_f32(svptrue_b32(), sum);
  for (std::int64_t j = 0; j < n; j += vl) {
    const svbool_t lanes = svwhilelt_b32(j, n);
    svst1_f32(lanes, x + j, svmul_n_f32_x(lanes, svld1_f32(lanes, x + j), inverse));
  }
}

}  // namespace ropecheck::kernels
