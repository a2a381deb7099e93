// The fused RoPE + KV-cache kernel (fused_cache_kernel.h) with AVX2 + FMA + F16C: the AVX2 level's
// rows and q rotation (rope_kernel_avx2_body.h), k rotated by its rotate_pairs and half-split
// arithmetic, 8 floats a vector, stored with its storage policies (bf16 and fp16 rounded as its
// kernels round them) or narrowed to FP8 here. Compiled with -mavx2 -mfma -mf16c (CMake object
// library); only called after cpuid says so.
#include <immintrin.h>

#include <cstring>

#include "core/fp8.h"
#include "impls/kernels/fused_cache_kernel_body.h"
#include "impls/kernels/rope_kernel_avx2_body.h"

namespace ropecheck::kernels {
namespace {

// fp32 -> FP8 (core/fp8.h's fp8_from_float, 8 lanes): the code of each lane, sign included, in its
// low byte. fused_cache_avx512.cc's fp8_codes says why each step is right: |x| clamped to the
// largest finite value (a NaN passes), one FPU rounding against m = 2^(E + 23 - mb) with E at least
// the smallest normal's exponent, the count of steps plus the binade's codes, a NaN to the format's
// NaN by one unsigned min, the sign at bit 7. 15 operations a vector (no ternary logic in AVX2).
template <Fp8Format kFormat>
__m256i fp8_codes(__m256 x) {
  constexpr Fp8Traits t = fp8_traits(kFormat);
  constexpr int drop = 23 - t.mantissa_bits;
  constexpr int min_normal_field = (128 - t.bias) << 23;
  constexpr int magic_offset = drop << 23;
  constexpr int offset = (127 + drop + 1 - t.bias) << t.mantissa_bits;
  const __m256i bits = _mm256_castps_si256(x);
  // minps returns its second operand when either is a NaN: a NaN passes.
  const __m256 magnitude =
      _mm256_min_ps(_mm256_set1_ps(t.max), _mm256_castsi256_ps(_mm256_and_si256(bits, _mm256_set1_epi32(0x7FFFFFFF))));
  const __m256i field = _mm256_max_epu32(_mm256_and_si256(_mm256_castps_si256(magnitude), _mm256_set1_epi32(0x7F800000)),
                                         _mm256_set1_epi32(min_normal_field));
  const __m256i magic = _mm256_add_epi32(field, _mm256_set1_epi32(magic_offset));
  const __m256i count = _mm256_sub_epi32(_mm256_castps_si256(_mm256_add_ps(magnitude, _mm256_castsi256_ps(magic))), magic);
  const __m256i binade = _mm256_sub_epi32(_mm256_srli_epi32(magic, drop), _mm256_set1_epi32(offset));
  const __m256i code = _mm256_min_epu32(_mm256_add_epi32(count, binade), _mm256_set1_epi32(t.nan_bits));
  const __m256i sign = _mm256_and_si256(_mm256_srli_epi32(bits, 24), _mm256_set1_epi32(0x80));
  return _mm256_or_si256(code, sign);
}

// The low byte of each 32-bit lane, in order, in the low 8 bytes.
inline __m128i low_bytes(__m256i codes) {
  const __m256i gather = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,  //
                                          0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m256i per_lane = _mm256_shuffle_epi8(codes, gather);  // 4 bytes at the bottom of each 128-bit lane
  return _mm_unpacklo_epi32(_mm256_castsi256_si128(per_lane), _mm256_extracti128_si256(per_lane, 1));
}

template <Fp8Format kFormat>
struct Fp8Storage {
  using Element = std::uint8_t;
  static void store(std::uint8_t* x, __m256 v) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(x), low_bytes(fp8_codes<kFormat>(v)));
  }
  static void store_first(std::uint8_t* x, __m256 v, int n) {
    alignas(16) std::uint8_t buffer[16];
    _mm_store_si128(reinterpret_cast<__m128i*>(buffer), low_bytes(fp8_codes<kFormat>(v)));
    std::memcpy(x, buffer, static_cast<unsigned>(n));
  }
};

inline __m256 scaled(__m256 y, CacheScale s, __m256 value) {
  if (!s.on) return y;
  return s.divide ? _mm256_div_ps(y, value) : _mm256_mul_ps(y, value);
}

template <typename S>
struct Avx2Writer {
  using Element = typename S::Element;

  static void plain(const float* x, std::int64_t n, unsigned char* row, CacheScale s) {
    Element* out = reinterpret_cast<Element*>(row);
    const __m256 value = _mm256_set1_ps(s.value);
    std::int64_t i = 0;
    for (; i + 8 <= n; i += 8) S::store(out + i, scaled(Fp32Storage::load(x + i), s, value));
    if (i < n) {
      const int rest = static_cast<int>(n - i);
      S::store_first(out + i, scaled(Fp32Storage::load_first(x + i, rest), s, value), rest);
    }
  }

  // Avx2Level's rotation (rotate_pairs; the half-split's fnmadd and fmadd), read from k.
  static void rotated(const FusedCacheArgs& p, const float* x, unsigned char* row, CacheScale s) {
    Element* out = reinterpret_cast<Element*>(row);
    const __m256 value = _mm256_set1_ps(s.value);
    const float* c = p.table;
    const float* sn = p.table + p.rotary_dim;
    const int rotary = p.rotary_dim;
    if (p.interleaved) {
      int j = 0;
      for (; j + 8 <= rotary; j += 8) {
        const __m256 y = rotate_pairs(Fp32Storage::load(x + j), _mm256_loadu_ps(c + j), _mm256_loadu_ps(sn + j));
        S::store(out + j, scaled(y, s, value));
      }
      if (j < rotary) {
        const int n = rotary - j;
        const __m256i lanes = mask8(n);
        const __m256 y = rotate_pairs(Fp32Storage::load_first(x + j, n), _mm256_maskload_ps(c + j, lanes),
                                      _mm256_maskload_ps(sn + j, lanes));
        S::store_first(out + j, scaled(y, s, value), n);
      }
    } else {
      const int half = rotary / 2;
      int i = 0;
      for (; i + 8 <= half; i += 8) {
        const __m256 x1 = Fp32Storage::load(x + i), x2 = Fp32Storage::load(x + half + i);
        const __m256 cv = in_register(_mm256_loadu_ps(c + i)), sv = in_register(_mm256_loadu_ps(sn + i));
        S::store(out + i, scaled(_mm256_fnmadd_ps(x2, sv, _mm256_mul_ps(x1, cv)), s, value));
        S::store(out + half + i, scaled(_mm256_fmadd_ps(x1, sv, _mm256_mul_ps(x2, cv)), s, value));
      }
      if (i < half) {
        const int n = half - i;
        const __m256i lanes = mask8(n);
        const __m256 x1 = Fp32Storage::load_first(x + i, n), x2 = Fp32Storage::load_first(x + half + i, n);
        const __m256 cv = _mm256_maskload_ps(c + i, lanes), sv = _mm256_maskload_ps(sn + i, lanes);
        S::store_first(out + i, scaled(_mm256_fnmadd_ps(x2, sv, _mm256_mul_ps(x1, cv)), s, value), n);
        S::store_first(out + half + i, scaled(_mm256_fmadd_ps(x1, sv, _mm256_mul_ps(x2, cv)), s, value), n);
      }
    }
    if (rotary < p.head_dim) plain(x + rotary, p.head_dim - rotary, row + rotary * sizeof(Element), s);
  }
};

void run(const FusedCacheArgs& p, bool rotate) {
  run_on_storage<Avx2Level<Fp32Storage>, Avx2Writer, Fp32Storage, Bf16Storage, Fp16Storage,
                 Fp8Storage<Fp8Format::e4m3>, Fp8Storage<Fp8Format::e5m2>>(p, rotate);
}

}  // namespace

void fused_rope_cache_avx2(const FusedCacheArgs& p) { run(p, true); }
void cache_write_avx2(const FusedCacheArgs& p) { run(p, false); }

void fp8_narrow_avx2(const float* x, std::uint8_t* out, std::int64_t n, bool e5m2) {
  const auto narrow = [&](auto storage) {
    using S = decltype(storage);
    std::int64_t i = 0;
    for (; i + 8 <= n; i += 8) S::store(out + i, _mm256_loadu_ps(x + i));
    if (i < n) S::store_first(out + i, Fp32Storage::load_first(x + i, static_cast<int>(n - i)), static_cast<int>(n - i));
  };
  e5m2 ? narrow(Fp8Storage<Fp8Format::e5m2>{}) : narrow(Fp8Storage<Fp8Format::e4m3>{});
}

}  // namespace ropecheck::kernels
