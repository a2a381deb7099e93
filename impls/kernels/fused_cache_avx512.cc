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

// fp32 -> FP8 (core/fp8.h's fp8_from_float, 16 lanes), as fused_cache_avx2.cc's fp8_codes:
// normal by an integer round-half-even add, below the smallest normal by the FPU's rounding of
// |x| + 2^(k+23) (2^k: the subnormal spacing), saturated at the largest finite value, NaN kept.
template <Fp8Format kFormat>
__m128i fp8_codes(__m512 x) {
  constexpr Fp8Traits t = fp8_traits(kFormat);
  constexpr int drop = 23 - t.mantissa_bits;
  const __m512i bits = _mm512_castps_si512(x);
  const __m512i magnitude = _mm512_and_si512(bits, _mm512_set1_epi32(0x7FFFFFFF));
  const __m512i sign = _mm512_srli_epi32(_mm512_andnot_si512(_mm512_set1_epi32(0x7FFFFFFF), bits), 24);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(magnitude, drop), _mm512_set1_epi32(1));
  const __m512i rounded =
      _mm512_srli_epi32(_mm512_add_epi32(magnitude, _mm512_add_epi32(_mm512_set1_epi32((1 << (drop - 1)) - 1), lsb)), drop);
  const __m512i normal = _mm512_sub_epi32(rounded, _mm512_set1_epi32((127 - t.bias) << t.mantissa_bits));
  const __m512 magic = _mm512_set1_ps(t.min_subnormal * 0x1p23f);
  const __m512i subnormal = _mm512_sub_epi32(
      _mm512_castps_si512(_mm512_add_ps(_mm512_castsi512_ps(magnitude), magic)), _mm512_castps_si512(magic));
  const __mmask16 below_normal = _mm512_cmplt_epu32_mask(magnitude, _mm512_set1_epi32((128 - t.bias) << 23));
  __m512i code = _mm512_mask_blend_epi32(below_normal, normal, subnormal);
  code = _mm512_min_epu32(code, _mm512_set1_epi32(t.max_bits));
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(magnitude, _mm512_set1_epi32(0x7F800000));
  code = _mm512_mask_mov_epi32(code, nan, _mm512_set1_epi32(t.nan_bits));
  return _mm512_cvtepi32_epi8(_mm512_or_si512(code, sign));
}

template <Fp8Format kFormat>
struct Fp8Storage {
  using Element = std::uint8_t;
  static void store(std::uint8_t* x, __m512 v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(x), fp8_codes<kFormat>(v)); }
  static void store(std::uint8_t* x, __m512 v, __mmask16 lanes) { _mm_mask_storeu_epi8(x, lanes, fp8_codes<kFormat>(v)); }
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
  const auto narrow = [&](auto storage) {
    using S = decltype(storage);
    std::int64_t i = 0;
    for (; i + 16 <= n; i += 16) S::store(out + i, _mm512_loadu_ps(x + i));
    if (i < n) {
      const __mmask16 lanes = mask16(static_cast<int>(n - i));
      S::store(out + i, _mm512_maskz_loadu_ps(lanes, x + i), lanes);
    }
  };
  e5m2 ? narrow(Fp8Storage<Fp8Format::e5m2>{}) : narrow(Fp8Storage<Fp8Format::e4m3>{});
}

}  // namespace ropecheck::kernels
