// The AVX-512 RoPE kernel on bf16 storage, rounding with the AVX512_BF16 instruction
// vcvtneps2bf16 (round to nearest even; subnormal results flushed to zero). The body is
// rope_kernel_avx512_body.h. Compiled with the AVX-512 flags plus -mavx512bf16 (CMake object
// library); only called after cpuid reports AVX512_BF16.
#include "impls/kernels/rope_kernel_avx512_body.h"

namespace ropecheck::kernels {
namespace {

struct NativeRoundingBf16 {
  static __m256i narrow(__m512 v) { return reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(v)); }
};

}  // namespace

void rope_kernel_bf16_avx512bf16(const RopeKernelBf16Problem& p) {
  run_tokens<Avx512Level<Bf16Storage<NativeRoundingBf16>>>(p);
}

}  // namespace ropecheck::kernels
