// The fast RoPE algorithm (rope_kernel.h) with SVE intrinsics, vector-length agnostic, on fp32,
// bf16 and fp16 storage (bf16 rounded with integer ops, fp16 by fcvt: no FEAT_BF16 needed). The
// body is rope_kernel_sve_body.h. Compiled with the sve level's flags (CMake object library); only
// called after getauxval says SVE. Run: `ropecheck verify --impl kernel/sve` (under qemu-aarch64,
// QEMU_CPU=max,sve-default-vector-length=<bytes> picks the vector length).
// Napkin math, per element of q and k: one load and one store (4 + 4 bytes in fp32, 2 + 2 in
// bf16/fp16), 2 flops of FMA-unit work (a multiply and an FMA) plus a pair swap (interleaved) or
// nothing (half-split), and in 16-bit storage a widening and a narrowing (fcvt each; bf16: a shift,
// and 6 integer ops with the NaN select). The table row (2 * rotary_dim floats) is loaded a
// vector at a time and held across every head of the token. A vector holds svcntw() floats, a
// run-time value (4 at 128 bits to 64 at 2048): the loops step by it and never assume it.
#include "impls/kernels/rope_kernel_sve_body.h"

namespace ropecheck::kernels {

void rope_kernel_sve(const RopeKernelProblem& p) { run_tokens<SveLevel<SveFp32>>(p); }
void rope_kernel_bf16_sve(const RopeKernelBf16Problem& p) { run_tokens<SveLevel<SveBf16>>(p); }
void rope_kernel_fp16_sve(const RopeKernelFp16Problem& p) { run_tokens<SveLevel<SveFp16>>(p); }

// mutant/sve_tail_predicate_dropped: the fp32 kernel above with feature_lanes' one decision flipped.
void rope_kernel_sve_tail_predicate_dropped(const RopeKernelProblem& p) {
  run_tokens<SveLevel<SveFp32, true>>(p);
}

void round_trip_fp16_sve(Fp16* x, std::int64_t n) { round_trip<SveFp16>(x, n); }
void round_trip_bf16_sve(std::uint16_t* x, std::int64_t n) { round_trip<SveBf16>(x, n); }

void rotation_alone_sve(float* x, std::int64_t n, bool interleaved) { rotation_alone<SveFp32>(x, n, interleaved); }
void rotation_alone_fp16_sve(Fp16* x, std::int64_t n, bool interleaved) {
  rotation_alone<SveFp16>(x, n, interleaved);
}
void rotation_alone_bf16_sve(std::uint16_t* x, std::int64_t n, bool interleaved) {
  rotation_alone<SveBf16>(x, n, interleaved);
}

}  // namespace ropecheck::kernels
