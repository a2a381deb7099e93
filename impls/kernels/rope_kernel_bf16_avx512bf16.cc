// The AVX-512 RoPE kernel on bf16 storage, rounding with the AVX512_BF16 instruction
// vcvtne2ps2bf16 (round to nearest even; subnormal results flushed to zero). The body is
// rope_kernel_avx512_body.h, its bf16 rotations rope_kernel_avx512_bf16.h. Compiled with the AVX-512 flags plus -mavx512bf16 (CMake object
// library); only called after cpuid reports AVX512_BF16.
#include "impls/kernels/rope_kernel_avx512_body.h"

namespace ropecheck::kernels {
namespace {

struct NativeRoundingBf16 {
  // 32 bf16: feature 2j is low_j rounded, feature 2j + 1 high_j rounded. vcvtne2ps2bf16 packs
  // [low_0 .. low_15, high_0 .. high_15]; one word permute interleaves them.
  static __m512i narrow_pairs(__m512 low, __m512 high) {
    const __m512i interleave = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8,
                                                23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    return _mm512_permutexvar_epi16(interleave, reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(high, low)));
  }
};

}  // namespace

void rope_kernel_bf16_avx512bf16(const RopeKernelBf16Problem& p) {
  run_tokens<Avx512Level<Bf16Lanes<NativeRoundingBf16>>>(p);
}

void round_trip_bf16_avx512bf16(std::uint16_t* x, std::int64_t n) { round_trip_bf16<NativeRoundingBf16>(x, n); }

void rotation_alone_bf16_avx512bf16(std::uint16_t* x, std::int64_t n, bool interleaved) {
  rotation_alone_bf16<NativeRoundingBf16>(x, n, interleaved);
}

}  // namespace ropecheck::kernels
