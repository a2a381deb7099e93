// The fast RoPE algorithm (rope_kernel.h) with AVX-512 intrinsics, on fp32, bf16 and fp16 storage
// (bf16 rounded with integer ops and fp16 by vcvtps2ph, so it runs on every AVX-512 CPU). The body is
// rope_kernel_avx512_body.h, its bf16 rotations rope_kernel_avx512_bf16.h. Compiled with
// -mavx512f -mavx512dq -mavx512vl -mavx512bw -mfma (CMake object library); only called after
// cpuid says so.
#include "impls/kernels/rope_kernel_avx512_body.h"

namespace ropecheck::kernels {

void rope_kernel_avx512(const RopeKernelProblem& p) { run_tokens<Avx512Level<Fp32Storage>>(p); }

void rope_kernel_bf16_avx512(const RopeKernelBf16Problem& p) {
  run_tokens<Avx512Level<Bf16Lanes<IntegerRoundingBf16>>>(p);
}

void rope_kernel_fp16_avx512(const RopeKernelFp16Problem& p) {
  run_tokens<Avx512Level<Fp16Storage>>(p);
}

void round_trip_fp16_avx512(Fp16* x, std::int64_t n) { round_trip<Fp16Storage>(x, n); }
void round_trip_bf16_avx512(std::uint16_t* x, std::int64_t n) { round_trip_bf16<IntegerRoundingBf16>(x, n); }

void rotation_alone_avx512(float* x, std::int64_t n, bool interleaved) {
  rotation_alone<Fp32Storage>(x, n, interleaved);
}
void rotation_alone_fp16_avx512(Fp16* x, std::int64_t n, bool interleaved) {
  rotation_alone<Fp16Storage>(x, n, interleaved);
}
void rotation_alone_bf16_avx512(std::uint16_t* x, std::int64_t n, bool interleaved) {
  rotation_alone_bf16<IntegerRoundingBf16>(x, n, interleaved);
}

}  // namespace ropecheck::kernels
