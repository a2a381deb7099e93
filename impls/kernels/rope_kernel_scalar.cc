// The fast RoPE algorithm (rope_kernel.h) in portable C++: the reference for the SIMD levels and
// the level that runs on any CPU, on fp32, bf16 and fp16 storage (storage.h's portable rounding).
// sin/cos from SLEEF's scalar sincos, like the vector levels.
// The body (loads, stores, ScalarLevel) is rope_kernel_scalar_body.h.
#include "impls/kernels/rope_kernel_scalar_body.h"

namespace ropecheck::kernels {

void rope_kernel_scalar(const RopeKernelProblem& p) { run_tokens<ScalarLevel>(p); }
void rope_kernel_bf16_scalar(const RopeKernelBf16Problem& p) { run_tokens<ScalarLevel>(p); }
void rope_kernel_fp16_scalar(const RopeKernelFp16Problem& p) { run_tokens<ScalarLevel>(p); }

}  // namespace ropecheck::kernels
