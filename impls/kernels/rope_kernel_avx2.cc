// The fast RoPE algorithm (rope_kernel.h) with AVX2 + FMA intrinsics: 8 floats a vector, 4 angles
// a SLEEF call, masked loads/stores (vmaskmov) for every remainder. On fp32, bf16 (a shift to
// widen, integer rounding to narrow) and fp16 storage (F16C's vcvtph2ps / vcvtps2ph); 16-bit
// elements have no AVX2 masked load or store, so their remainder goes through an 8-element stack
// buffer. Compiled with -mavx2 -mfma -mf16c (CMake object library); only called after cpuid says so.
// The body (storage policies, rotations, Avx2Level) is rope_kernel_avx2_body.h.
#include "impls/kernels/rope_kernel_avx2_body.h"

namespace ropecheck::kernels {
namespace {

// rope_kernel.h's round_trip_*: S's widening and narrowing alone, four vectors a step as the
// probe walks, the remainder through S's buffer. (The asm keeps the compiler from pairing the
// two away.)
template <typename S>
void round_trip(typename S::Element* x, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
#pragma GCC unroll 2
    for (int t = 0; t < 2; ++t) {  // two vectors a store2, as the kernels' rows store them
      __m256 a = S::load(x + i + 16 * t), b = S::load(x + i + 16 * t + 8);
      asm("" : "+x"(a), "+x"(b));
      S::store2(x + i + 16 * t, a, b);
    }
  }
  for (; i < n; i += 8) {
    const int count = static_cast<int>(n - i < 8 ? n - i : 8);
    __m256 v = S::load_first(x + i, count);
    asm("" : "+x"(v));
    S::store_first(x + i, v, count);
  }
}

// rope_kernel.h's rotation_alone_*: the rotation with cos and sin in registers, on S's storage,
// 16 elements (two registers) a block; the remainder is only converted.
template <typename S>
void rotation_alone(typename S::Element* x, std::int64_t n, bool interleaved) {
  const __m256 c = _mm256_set1_ps(kAloneCos), s = _mm256_set1_ps(kAloneSin);
  const __m256 s_signed = _mm256_mul_ps(s, _mm256_setr_ps(-1, 1, -1, 1, -1, 1, -1, 1));
  std::int64_t i = 0;
  if (interleaved) {
    for (; i + 16 <= n; i += 16) {
      const __m256 y0 = rotate_pairs(S::load(x + i), c, s_signed), y1 = rotate_pairs(S::load(x + i + 8), c, s_signed);
      S::store2(x + i, y0, y1);
    }
  } else {
    for (; i + 16 <= n; i += 16) {
      const __m256 x1 = S::load(x + i), x2 = S::load(x + i + 8);
      S::store2(x + i, _mm256_fnmadd_ps(x2, s, _mm256_mul_ps(x1, c)), _mm256_fmadd_ps(x1, s, _mm256_mul_ps(x2, c)));
    }
  }
  for (; i < n; i += 8) {
    const int count = static_cast<int>(n - i < 8 ? n - i : 8);
    S::store_first(x + i, S::load_first(x + i, count), count);
  }
}

}  // namespace

void rope_kernel_avx2(const RopeKernelProblem& p) { run_tokens<Avx2Level<Fp32Storage>>(p); }
void rope_kernel_bf16_avx2(const RopeKernelBf16Problem& p) { run_tokens<Avx2Level<Bf16Storage>>(p); }
void rope_kernel_fp16_avx2(const RopeKernelFp16Problem& p) { run_tokens<Avx2Level<Fp16Storage>>(p); }

void round_trip_fp16_avx2(Fp16* x, std::int64_t n) { round_trip<Fp16Storage>(x, n); }
void round_trip_bf16_avx2(std::uint16_t* x, std::int64_t n) { round_trip<Bf16Storage>(x, n); }

void rotation_alone_avx2(float* x, std::int64_t n, bool interleaved) { rotation_alone<Fp32Storage>(x, n, interleaved); }
void rotation_alone_fp16_avx2(Fp16* x, std::int64_t n, bool interleaved) {
  rotation_alone<Fp16Storage>(x, n, interleaved);
}
void rotation_alone_bf16_avx2(std::uint16_t* x, std::int64_t n, bool interleaved) {
  rotation_alone<Bf16Storage>(x, n, interleaved);
}

}  // namespace ropecheck::kernels
