// The fused RoPE + KV-cache kernel (fused_cache_kernel.h) with aarch64 NEON: the NEON level's rows
// and q rotation (rope_kernel_neon_body.h), k rotated by its rotate_pairs and half-split
// arithmetic, 4 floats a vector, stored with its storage policies (bf16 and fp16 rounded as its
// kernels round them) or narrowed to FP8 here; every remainder through a stack buffer (no masked
// stores). Compiled with the aarch64 baseline's flags (CMake object library).
// Napkin math: as fused_cache_avx2.cc's; FP8 is 12 vector operations a 4-float vector (the
// narrowing below) plus the narrowing moves, so at 4 floats a vector the codes cost about as
// much as the rotation they follow.
#include <arm_neon.h>

#include <cstring>

#include "core/fp8.h"
#include "impls/kernels/fused_cache_kernel_body.h"
#include "impls/kernels/rope_kernel_neon_body.h"

namespace ropecheck::kernels {
namespace {

// fp32 -> FP8 (core/fp8.h's fp8_from_float, 4 lanes): the code of each lane, sign included, in its
// low byte. fused_cache_avx512.cc's fp8_codes says why each step is right: |x| clamped to the
// largest finite value (a NaN passes: fmin returns the NaN, as minps returns its second operand),
// one FPU rounding against m = 2^(E + 23 - mb) with E at least the smallest normal's exponent (FPCR
// at round to nearest, subnormals kept), the count of steps plus the binade's codes, a NaN to the
// format's NaN by one unsigned min, the sign at bit 7.
template <Fp8Format kFormat>
uint32x4_t fp8_codes(float32x4_t x) {
  constexpr Fp8Traits t = fp8_traits(kFormat);
  constexpr int drop = 23 - t.mantissa_bits;
  constexpr std::uint32_t min_normal_field = static_cast<std::uint32_t>(128 - t.bias) << 23;
  constexpr std::uint32_t magic_offset = static_cast<std::uint32_t>(drop) << 23;
  constexpr std::uint32_t offset = static_cast<std::uint32_t>(127 + drop + 1 - t.bias) << t.mantissa_bits;
  const uint32x4_t bits = vreinterpretq_u32_f32(x);
  const float32x4_t magnitude =
      vminq_f32(vdupq_n_f32(t.max), vreinterpretq_f32_u32(vandq_u32(bits, vdupq_n_u32(0x7FFFFFFF))));
  const uint32x4_t field =
      vmaxq_u32(vandq_u32(vreinterpretq_u32_f32(magnitude), vdupq_n_u32(0x7F800000)), vdupq_n_u32(min_normal_field));
  const uint32x4_t magic = vaddq_u32(field, vdupq_n_u32(magic_offset));
  const uint32x4_t count = vsubq_u32(vreinterpretq_u32_f32(vaddq_f32(magnitude, vreinterpretq_f32_u32(magic))), magic);
  const uint32x4_t binade = vsubq_u32(vshrq_n_u32(magic, drop), vdupq_n_u32(offset));
  const uint32x4_t code = vminq_u32(vaddq_u32(count, binade), vdupq_n_u32(t.nan_bits));
  const uint32x4_t sign = vandq_u32(vshrq_n_u32(bits, 24), vdupq_n_u32(0x80));
  return vorrq_u32(code, sign);
}

template <Fp8Format kFormat>
struct Fp8Storage {
  using Element = std::uint8_t;
  // Two vectors' 8 codes: two narrowing moves (xtn, xtn2) to 16 bits, one more to 8.
  static uint8x8_t codes8(float32x4_t a, float32x4_t b) {
    return vmovn_u16(vmovn_high_u32(vmovn_u32(fp8_codes<kFormat>(a)), fp8_codes<kFormat>(b)));
  }
  static void store(std::uint8_t* x, float32x4_t v) {
    std::uint8_t buffer[8];
    vst1_u8(buffer, codes8(v, v));
    std::memcpy(x, buffer, 4);
  }
  static void store_first(std::uint8_t* x, float32x4_t v, int n) {
    std::uint8_t buffer[8];
    vst1_u8(buffer, codes8(v, v));
    std::memcpy(x, buffer, static_cast<unsigned>(n));
  }
  // Four vectors' 16 codes, one 128-bit store.
  static void store4(std::uint8_t* x, float32x4_t a, float32x4_t b, float32x4_t c, float32x4_t d) {
    const uint16x8_t low = vmovn_high_u32(vmovn_u32(fp8_codes<kFormat>(a)), fp8_codes<kFormat>(b));
    const uint16x8_t high = vmovn_high_u32(vmovn_u32(fp8_codes<kFormat>(c)), fp8_codes<kFormat>(d));
    vst1q_u8(x, vmovn_high_u16(vmovn_u16(low), high));
  }
};

inline float32x4_t scaled(float32x4_t y, CacheScale s, float32x4_t value) {
  if (!s.on) return y;
  return s.divide ? vdivq_f32(y, value) : vmulq_f32(y, value);
}

template <typename S>
struct NeonWriter {
  using Element = typename S::Element;

  // Four vectors to out[0, 16): at once where the storage packs four (FP8), else two by two.
  static void store4(Element* out, float32x4_t a, float32x4_t b, float32x4_t c, float32x4_t d) {
    if constexpr (requires { S::store4(out, a, b, c, d); }) {
      S::store4(out, a, b, c, d);
    } else {
      S::store2(out, a, b);
      S::store2(out + 8, c, d);
    }
  }

  static void plain(const float* x, std::int64_t n, unsigned char* row, CacheScale s) {
    Element* out = reinterpret_cast<Element*>(row);
    const float32x4_t value = vdupq_n_f32(s.value);
    const auto at = [&](std::int64_t j) { return scaled(Fp32Storage::load(x + j), s, value); };
    std::int64_t i = 0;
    for (; i + 16 <= n; i += 16) store4(out + i, at(i), at(i + 4), at(i + 8), at(i + 12));
    for (; i + 4 <= n; i += 4) S::store(out + i, at(i));
    if (i < n) {
      const int rest = static_cast<int>(n - i);
      S::store_first(out + i, scaled(Fp32Storage::load_first(x + i, rest), s, value), rest);
    }
  }

  // NeonLevel's rotation (rotate_pairs; rotate_halves), read from k. The table's last vector
  // reads the row's slack (TableRows::row_bytes), its lanes past the remainder unused.
  static void rotated(const FusedCacheArgs& p, const float* x, unsigned char* row, CacheScale s) {
    Element* out = reinterpret_cast<Element*>(row);
    const float32x4_t value = vdupq_n_f32(s.value);
    const float* c = p.table;
    const float* sn = p.table + p.rotary_dim;
    const int rotary = p.rotary_dim;
    if (p.interleaved) {
      const auto at = [&](int i) {
        return scaled(rotate_pairs(Fp32Storage::load(x + i), vld1q_f32(c + i), vld1q_f32(sn + i)), s, value);
      };
      int j = 0;
      for (; j + 16 <= rotary; j += 16) store4(out + j, at(j), at(j + 4), at(j + 8), at(j + 12));
      for (; j + 4 <= rotary; j += 4) S::store(out + j, at(j));
      if (j < rotary) {
        const int n = rotary - j;
        const float32x4_t y = rotate_pairs(Fp32Storage::load_first(x + j, n), vld1q_f32(c + j), vld1q_f32(sn + j));
        S::store_first(out + j, scaled(y, s, value), n);
      }
    } else {
      const int half = rotary / 2;
      // y[0]: the first half's 4 features from i, y[1] the second half's.
      const auto at = [&](int i, float32x4_t (&y)[2]) {
        rotate_halves(Fp32Storage::load(x + i), Fp32Storage::load(x + half + i), vld1q_f32(c + i), vld1q_f32(sn + i),
                      y[0], y[1]);
        y[0] = scaled(y[0], s, value);
        y[1] = scaled(y[1], s, value);
      };
      int i = 0;
      for (; i + 16 <= half; i += 16) {
        float32x4_t y0[2], y1[2], y2[2], y3[2];
        at(i, y0), at(i + 4, y1), at(i + 8, y2), at(i + 12, y3);
        store4(out + i, y0[0], y1[0], y2[0], y3[0]);
        store4(out + half + i, y0[1], y1[1], y2[1], y3[1]);
      }
      for (; i + 4 <= half; i += 4) {
        float32x4_t y[2];
        at(i, y);
        S::store(out + i, y[0]);
        S::store(out + half + i, y[1]);
      }
      if (i < half) {
        const int n = half - i;
        float32x4_t y1, y2;
        rotate_halves(Fp32Storage::load_first(x + i, n), Fp32Storage::load_first(x + half + i, n), vld1q_f32(c + i),
                      vld1q_f32(sn + i), y1, y2);
        S::store_first(out + i, scaled(y1, s, value), n);
        S::store_first(out + half + i, scaled(y2, s, value), n);
      }
    }
    if (rotary < p.head_dim) plain(x + rotary, p.head_dim - rotary, row + rotary * sizeof(Element), s);
  }
};

void run(const FusedCacheArgs& p, bool rotate) {
  run_on_storage<NeonLevel<Fp32Storage>, NeonWriter, Fp32Storage, Bf16Storage, Fp16Storage,
                 Fp8Storage<Fp8Format::e4m3>, Fp8Storage<Fp8Format::e5m2>>(p, rotate);
}

}  // namespace

void fused_rope_cache_neon(const FusedCacheArgs& p) { run(p, true); }
void cache_write_neon(const FusedCacheArgs& p) { run(p, false); }

void fp8_narrow_neon(const float* x, std::uint8_t* out, std::int64_t n, bool e5m2) {
  // The cache writer's own path (groups of four vectors, single vectors, the remainder), with no
  // scale: what the sweep judges is what a cache row gets.
  auto* row = reinterpret_cast<unsigned char*>(out);
  e5m2 ? NeonWriter<Fp8Storage<Fp8Format::e5m2>>::plain(x, n, row, CacheScale{})
       : NeonWriter<Fp8Storage<Fp8Format::e4m3>>::plain(x, n, row, CacheScale{});
}

}  // namespace ropecheck::kernels
