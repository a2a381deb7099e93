// The fast RoPE algorithm (rope_kernel.h) with aarch64 NEON intrinsics: 4 floats a vector, 2
// angles a SLEEF call (sincosd2_u35advsimd), every remainder through a 4-element stack buffer (NEON
// has no masked loads or stores). On fp32, bf16 (a shift to widen, integer rounding to narrow) and
// fp16 storage (fcvtl / fcvtn). Compiled with the aarch64 baseline's flags (CMake object library);
// called where getauxval says ASIMD (every aarch64 Linux CPU). Run under emulation with
// `qemu-aarch64 build-aarch64/ropecheck verify --impl kernel/neon`.
// The body (storage policies, rotations, NeonLevel) is rope_kernel_neon_body.h.
// Napkin math: as the other levels, q and k read and written once; the interleaved rotation is a
// rev64, a multiply and an FMA a vector (half-split: two multiplies, two FMAs for two vectors), so
// a 128-bit core with two FP pipes rotates 4 floats a cycle when the loads (x, cos, sin) keep up.
#include "impls/kernels/rope_kernel_neon_body.h"

namespace ropecheck::kernels {
namespace {

// rope_kernel.h's round_trip_*: S's widening and narrowing alone, two vectors a step, the
// remainder through S's buffer. (The asm keeps the compiler from pairing the two away.)
template <typename S>
void round_trip(typename S::Element* x, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    float32x4_t a, b;
    S::load2(x + i, a, b);
    asm("" : "+w"(a), "+w"(b));
    S::store2(x + i, a, b);
  }
  for (; i < n; i += 4) {
    const int count = static_cast<int>(n - i < 4 ? n - i : 4);
    float32x4_t v = S::load_first(x + i, count);
    asm("" : "+w"(v));
    S::store_first(x + i, v, count);
  }
}

// rope_kernel.h's rotation_alone_*: the rotation with cos and sin in registers, on S's storage,
// 8 elements (two registers) a block; the remainder is only converted.
template <typename S>
void rotation_alone(typename S::Element* x, std::int64_t n, bool interleaved) {
  const float32x4_t c = vdupq_n_f32(kAloneCos), s = vdupq_n_f32(kAloneSin);
  const float32x4_t sign = {-1.0f, 1.0f, -1.0f, 1.0f};
  const float32x4_t s_signed = vmulq_f32(s, sign);
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    float32x4_t a, b;
    S::load2(x + i, a, b);
    if (interleaved) {
      S::store2(x + i, rotate_pairs(a, c, s_signed), rotate_pairs(b, c, s_signed));
    } else {
      float32x4_t y1, y2;
      rotate_halves(a, b, c, s, y1, y2);
      S::store2(x + i, y1, y2);
    }
  }
  for (; i < n; i += 4) {
    const int count = static_cast<int>(n - i < 4 ? n - i : 4);
    S::store_first(x + i, S::load_first(x + i, count), count);
  }
}

}  // namespace

void rope_kernel_neon(const RopeKernelProblem& p) { run_tokens<NeonLevel<Fp32Storage>>(p); }
void rope_kernel_bf16_neon(const RopeKernelBf16Problem& p) { run_tokens<NeonLevel<Bf16Storage>>(p); }
void rope_kernel_fp16_neon(const RopeKernelFp16Problem& p) { run_tokens<NeonLevel<Fp16Storage>>(p); }

void rope_kernel_neon_zip_halves_swapped(const RopeKernelProblem& p) {
  run_tokens<NeonLevel<Fp32Storage, /*kZipHalvesSwapped=*/true>>(p);
}

void round_trip_fp16_neon(Fp16* x, std::int64_t n) { round_trip<Fp16Storage>(x, n); }
void round_trip_bf16_neon(std::uint16_t* x, std::int64_t n) { round_trip<Bf16Storage>(x, n); }

void rotation_alone_neon(float* x, std::int64_t n, bool interleaved) { rotation_alone<Fp32Storage>(x, n, interleaved); }
void rotation_alone_fp16_neon(Fp16* x, std::int64_t n, bool interleaved) {
  rotation_alone<Fp16Storage>(x, n, interleaved);
}
void rotation_alone_bf16_neon(std::uint16_t* x, std::int64_t n, bool interleaved) {
  rotation_alone<Bf16Storage>(x, n, interleaved);
}

}  // namespace ropecheck::kernels
