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
  // Four vectors' 32 codes at once: two dword packs, a word pack (each saturates, codes fit) and one
  // dword permute, where each vector alone takes a byte shuffle, an extract and an unpack. The
  // packs work per 128-bit lane: dword 4 * lane + k holds vector k's codes of that lane.
  static void store4(std::uint8_t* x, __m256 a, __m256 b, __m256 c, __m256 d) {
    const __m256i bytes = _mm256_packus_epi16(_mm256_packus_epi32(fp8_codes<kFormat>(a), fp8_codes<kFormat>(b)),
                                              _mm256_packus_epi32(fp8_codes<kFormat>(c), fp8_codes<kFormat>(d)));
    const __m256i in_order = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(x), in_order);
  }
};

inline __m256 scaled(__m256 y, CacheScale s, __m256 value) {
  if (!s.on) return y;
  return s.divide ? _mm256_div_ps(y, value) : _mm256_mul_ps(y, value);
}

template <typename S>
struct Avx2Writer {
  using Element = typename S::Element;

  // Four vectors to out[0, 32): at once where the storage packs four (FP8), else one by one.
  static void store4(Element* out, __m256 a, __m256 b, __m256 c, __m256 d) {
    if constexpr (requires { S::store4(out, a, b, c, d); }) {
      S::store4(out, a, b, c, d);
    } else {
      S::store(out, a);
      S::store(out + 8, b);
      S::store(out + 16, c);
      S::store(out + 24, d);
    }
  }

  static void plain(const float* x, std::int64_t n, unsigned char* row, CacheScale s) {
    Element* out = reinterpret_cast<Element*>(row);
    const __m256 value = _mm256_set1_ps(s.value);
    const auto at = [&](std::int64_t j) { return scaled(Fp32Storage::load(x + j), s, value); };
    std::int64_t i = 0;
    for (; i + 32 <= n; i += 32) store4(out + i, at(i), at(i + 8), at(i + 16), at(i + 24));
    for (; i + 8 <= n; i += 8) S::store(out + i, at(i));
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
      const auto at = [&](int i) {
        return scaled(rotate_pairs(Fp32Storage::load(x + i), _mm256_loadu_ps(c + i), _mm256_loadu_ps(sn + i)), s, value);
      };
      int j = 0;
      for (; j + 32 <= rotary; j += 32) store4(out + j, at(j), at(j + 8), at(j + 16), at(j + 24));
      for (; j + 8 <= rotary; j += 8) S::store(out + j, at(j));
      if (j < rotary) {
        const int n = rotary - j;
        const __m256i lanes = mask8(n);
        const __m256 y = rotate_pairs(Fp32Storage::load_first(x + j, n), _mm256_maskload_ps(c + j, lanes),
                                      _mm256_maskload_ps(sn + j, lanes));
        S::store_first(out + j, scaled(y, s, value), n);
      }
    } else {
      const int half = rotary / 2;
      // y[0]: the first half's 8 features from i, y[1] the second half's.
      const auto at = [&](int i, __m256 (&y)[2]) {
        const __m256 x1 = Fp32Storage::load(x + i), x2 = Fp32Storage::load(x + half + i);
        const __m256 cv = in_register(_mm256_loadu_ps(c + i)), sv = in_register(_mm256_loadu_ps(sn + i));
        y[0] = scaled(_mm256_fnmadd_ps(x2, sv, _mm256_mul_ps(x1, cv)), s, value);
        y[1] = scaled(_mm256_fmadd_ps(x1, sv, _mm256_mul_ps(x2, cv)), s, value);
      };
      int i = 0;
      for (; i + 32 <= half; i += 32) {
        __m256 y0[2], y1[2], y2[2], y3[2];
        at(i, y0), at(i + 8, y1), at(i + 16, y2), at(i + 24, y3);
        store4(out + i, y0[0], y1[0], y2[0], y3[0]);
        store4(out + half + i, y0[1], y1[1], y2[1], y3[1]);
      }
      for (; i + 8 <= half; i += 8) {
        __m256 y[2];
        at(i, y);
        S::store(out + i, y[0]);
        S::store(out + half + i, y[1]);
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
  // The cache writer's own path (groups of four vectors packed at once, single vectors, the
  // remainder), with no scale: what the sweep judges is what a cache row gets.
  auto* row = reinterpret_cast<unsigned char*>(out);
  e5m2 ? Avx2Writer<Fp8Storage<Fp8Format::e5m2>>::plain(x, n, row, CacheScale{})
       : Avx2Writer<Fp8Storage<Fp8Format::e4m3>>::plain(x, n, row, CacheScale{});
}

}  // namespace ropecheck::kernels
