// The fused RoPE + KV-cache kernel (fused_cache_kernel.h) with AVX-512: the AVX-512 level's rows
// and q rotation (rope_kernel_avx512_body.h), k rotated by its rotate_pairs and half-split
// arithmetic, 16 floats a vector, masked remainders, stored as its storage policies store (fp16 by
// vcvtps2ph, bf16 by its integer rounding) or narrowed to FP8 here. Compiled with the avx512
// level's flags (CMake object library); only called after cpuid says so.
#include <immintrin.h>

#include "core/fp8.h"
#include "impls/kernels/fused_cache_kernel_body.h"
#include "impls/kernels/rope_kernel_avx512_body.h"

namespace ropecheck::kernels {
namespace {

// fp32 -> FP8 (core/fp8.h's fp8_from_float, 16 lanes): each lane's code, sign included, in its low
// byte. One rounding for normals and subnormals alike, 13 operations a vector:
//   |x| clamped to the largest finite value first (the min of max and |x|): RNE
//     is monotonic and the largest value is representable, so rounding the clamped value is
//     rounding then saturating; Inf becomes the largest; a NaN stays a NaN;
//   the FPU rounds: m = 2^(E+20) for e4m3 (2^(E+21) e5m2), E the exponent of |x| but at least the
//     smallest normal's, has ulp 2^(E-3) (2^(E-2)): the format's step in |x|'s binade, and the
//     subnormal spacing below it; so the bits of |x| + m minus m's count |x| in steps, to nearest
//     even (a carry into the next binade is right: it counts 2^mantissa_bits steps);
//   the code is that count plus the binade's first code less its one-step offset:
//     count + 2^mb * (E + bias - 1), where m's bits >> (23 - mb) are 2^mb * (E + 127 + 23 - mb);
//     every sum is normal, so flush-to-zero modes cannot change it (an fp32 subnormal input, which
//     denormals-are-zero reads as 0, rounds to 0 either way); it needs the default RNE mode;
//   a NaN's count is far above every finite code (its bits minus m's): one unsigned min makes it
//     the format's NaN; the sign bit of x is OR'ed in at bit 7.
template <Fp8Format kFormat>
__m512i fp8_codes(__m512 x) {
  constexpr Fp8Traits t = fp8_traits(kFormat);
  constexpr int drop = 23 - t.mantissa_bits;
  // m's exponent is E + drop (ulp 2^(E - mantissa_bits)), E at least the smallest normal's.
  constexpr std::uint32_t min_normal_field = static_cast<std::uint32_t>(128 - t.bias) << 23;
  constexpr std::uint32_t magic_offset = static_cast<std::uint32_t>(drop) << 23;
  // count + (m_field >> drop) - offset = code: offset = 2^mb * (127 + drop + 1 - bias).
  constexpr std::uint32_t offset = static_cast<std::uint32_t>(127 + drop + 1 - t.bias) << t.mantissa_bits;
  // minps returns its second operand when either is a NaN: a NaN passes (vrangeps would drop it:
  // tried, the sweep's NaN became 0x7E).
  const __m512 magnitude = _mm512_min_ps(_mm512_set1_ps(t.max), _mm512_abs_ps(x));
  const __m512i field = _mm512_max_epu32(_mm512_and_si512(_mm512_castps_si512(magnitude), _mm512_set1_epi32(0x7F800000)),
                                         _mm512_set1_epi32(min_normal_field));
  const __m512i magic = _mm512_add_epi32(field, _mm512_set1_epi32(magic_offset));
  const __m512i count = _mm512_sub_epi32(_mm512_castps_si512(_mm512_add_ps(magnitude, _mm512_castsi512_ps(magic))), magic);
  const __m512i binade = _mm512_sub_epi32(_mm512_srli_epi32(magic, drop), _mm512_set1_epi32(offset));
  const __m512i code = _mm512_min_epu32(_mm512_add_epi32(count, binade), _mm512_set1_epi32(t.nan_bits));
  // code | (sign byte & 0x80): the sign of x sits at bit 7 of x >> 24.
  return _mm512_ternarylogic_epi32(code, _mm512_srli_epi32(_mm512_castps_si512(x), 24), _mm512_set1_epi32(0x80), 0xF8);
}

template <Fp8Format kFormat>
struct Fp8Storage {
  using Element = std::uint8_t;
  static void store(std::uint8_t* x, __m512 v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(x), _mm512_cvtepi32_epi8(fp8_codes<kFormat>(v))); }
  static void store(std::uint8_t* x, __m512 v, __mmask16 lanes) { _mm_mask_storeu_epi8(x, lanes, _mm512_cvtepi32_epi8(fp8_codes<kFormat>(v))); }
};

// bf16 one a lane (the kernel's bf16 path packs two a lane for its in-place rotation; a cache
// row is written from fp32 k): rounded as rope_kernel_avx512_bf16.h's IntegerRoundingBf16.
struct Bf16Storage {
  using Element = std::uint16_t;
  static __m256i narrow(__m512 v) { return _mm512_cvtepi32_epi16(_mm512_srli_epi32(rounded_to_top_half(v), 16)); }
  static void store(std::uint16_t* x, __m512 v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(x), narrow(v)); }
  static void store(std::uint16_t* x, __m512 v, __mmask16 lanes) { _mm256_mask_storeu_epi16(x, lanes, narrow(v)); }
};

inline __m512 scaled(__m512 y, CacheScale s, __m512 value) {
  if (!s.on) return y;
  return s.divide ? _mm512_div_ps(y, value) : _mm512_mul_ps(y, value);
}

template <typename S>
struct Avx512Writer {
  using Element = typename S::Element;

  static void plain(const float* x, std::int64_t n, unsigned char* row, CacheScale s) {
    Element* out = reinterpret_cast<Element*>(row);
    const __m512 value = _mm512_set1_ps(s.value);
    std::int64_t i = 0;
    for (; i + 16 <= n; i += 16) S::store(out + i, scaled(_mm512_loadu_ps(x + i), s, value));
    if (i < n) {
      const __mmask16 lanes = mask16(static_cast<int>(n - i));
      S::store(out + i, scaled(_mm512_maskz_loadu_ps(lanes, x + i), s, value), lanes);
    }
  }

  // Avx512Level's rotation (rotate_pairs; the half-split's fnmadd and fmadd), read from k.
  static void rotated(const FusedCacheArgs& p, const float* x, unsigned char* row, CacheScale s) {
    Element* out = reinterpret_cast<Element*>(row);
    const __m512 value = _mm512_set1_ps(s.value);
    const float* c = p.table;
    const float* sn = p.table + p.rotary_dim;
    const int rotary = p.rotary_dim;
    if (p.interleaved) {
      for (int j = 0; j < rotary; j += 16) {
        if (j + 16 <= rotary) {
          const __m512 y = rotate_pairs(_mm512_loadu_ps(x + j), _mm512_loadu_ps(c + j), _mm512_loadu_ps(sn + j));
          S::store(out + j, scaled(y, s, value));
        } else {
          const __mmask16 lanes = mask16(rotary - j);
          const __m512 y = rotate_pairs(_mm512_maskz_loadu_ps(lanes, x + j), _mm512_maskz_loadu_ps(lanes, c + j),
                                        _mm512_maskz_loadu_ps(lanes, sn + j));
          S::store(out + j, scaled(y, s, value), lanes);
        }
      }
    } else {
      const int half = rotary / 2;
      const auto pair = [&](int i, __mmask16 lanes, bool full) {
        const __m512 x1 = full ? _mm512_loadu_ps(x + i) : _mm512_maskz_loadu_ps(lanes, x + i);
        const __m512 x2 = full ? _mm512_loadu_ps(x + half + i) : _mm512_maskz_loadu_ps(lanes, x + half + i);
        const __m512 cv = full ? _mm512_loadu_ps(c + i) : _mm512_maskz_loadu_ps(lanes, c + i);
        const __m512 sv = full ? _mm512_loadu_ps(sn + i) : _mm512_maskz_loadu_ps(lanes, sn + i);
        const __m512 y1 = scaled(_mm512_fnmadd_ps(x2, sv, _mm512_mul_ps(x1, cv)), s, value);
        const __m512 y2 = scaled(_mm512_fmadd_ps(x1, sv, _mm512_mul_ps(x2, cv)), s, value);
        if (full) {
          S::store(out + i, y1);
          S::store(out + half + i, y2);
        } else {
          S::store(out + i, y1, lanes);
          S::store(out + half + i, y2, lanes);
        }
      };
      int i = 0;
      for (; i + 16 <= half; i += 16) pair(i, 0xFFFF, true);
      if (i < half) pair(i, mask16(half - i), false);
    }
    if (rotary < p.head_dim) plain(x + rotary, p.head_dim - rotary, row + rotary * sizeof(Element), s);
  }
};

void run(const FusedCacheArgs& p, bool rotate) {
  run_on_storage<Avx512Level<Fp32Storage>, Avx512Writer, Fp32Storage, Bf16Storage, Fp16Storage,
                 Fp8Storage<Fp8Format::e4m3>, Fp8Storage<Fp8Format::e5m2>>(p, rotate);
}

}  // namespace

void fused_rope_cache_avx512(const FusedCacheArgs& p) { run(p, true); }
void cache_write_avx512(const FusedCacheArgs& p) { run(p, false); }

void fp8_narrow_avx512(const float* x, std::uint8_t* out, std::int64_t n, bool e5m2) {
  // The cache writer's own path (whole vectors, the masked remainder), with no scale: what the
  // sweep judges is what a cache row gets.
  auto* row = reinterpret_cast<unsigned char*>(out);
  e5m2 ? Avx512Writer<Fp8Storage<Fp8Format::e5m2>>::plain(x, n, row, CacheScale{})
       : Avx512Writer<Fp8Storage<Fp8Format::e4m3>>::plain(x, n, row, CacheScale{});
}

}  // namespace ropecheck::kernels
