// The fused RoPE + KV-cache kernel (fused_cache_kernel.h) with SVE, vector-length agnostic: the
// sve level's rows and q rotation (rope_kernel_sve_body.h), k rotated by the same rotate_pairs and
// half-split arithmetic, svcntw() floats a vector under svwhilelt predicates, stored as its
// storage policies store (fp16 by fcvt, bf16 by the integer rounding) or narrowed to FP8 here.
// Compiled with the sve level's flags (CMake object library); only called after getauxval says SVE.
// Napkin math, per k or v element: 4 bytes read, 1 to 4 written into the cache row, 2 flops of
// rotation (k) and one of scale (FP8), 11 integer/FP operations of FP8 narrowing; per q element
// the kernel's 8 bytes and 2 flops. A vector is svcntw() lanes, a run-time value: the last one of
// every row is predicated, nothing is read or written past a row.
#include <arm_sve.h>

#include "core/fp8.h"
#include "impls/kernels/fused_cache_kernel_body.h"
#include "impls/kernels/rope_kernel_sve_body.h"

namespace ropecheck::kernels {
namespace {

// fp32 -> FP8 (core/fp8.h's fp8_from_float), each lane's code, sign included, in its low byte:
// fused_cache_avx512.cc's derivation, operation for operation (the FPU rounds |x| + m, m a power
// of two whose ulp is the format's step in |x|'s binade; see there). fmin, as minps, passes a NaN
// (FMIN, unlike FMINNM, returns the NaN operand); its count is far above every finite code, so the
// unsigned min makes it the format's NaN. Needs FPCR's default round to nearest even.
template <Fp8Format kFormat>
svuint32_t fp8_codes(svbool_t pg, svfloat32_t x) {
  constexpr Fp8Traits t = fp8_traits(kFormat);
  constexpr int drop = 23 - t.mantissa_bits;
  constexpr std::uint32_t min_normal_field = static_cast<std::uint32_t>(128 - t.bias) << 23;
  constexpr std::uint32_t magic_offset = static_cast<std::uint32_t>(drop) << 23;
  constexpr std::uint32_t offset = static_cast<std::uint32_t>(127 + drop + 1 - t.bias) << t.mantissa_bits;
  const svfloat32_t magnitude = svmin_f32_x(pg, svdup_n_f32(t.max), svabs_f32_x(pg, x));
  const svuint32_t field =
      svmax_n_u32_x(pg, svand_n_u32_x(pg, svreinterpret_u32_f32(magnitude), 0x7F800000u), min_normal_field);
  const svuint32_t magic = svadd_n_u32_x(pg, field, magic_offset);
  const svuint32_t count = svsub_u32_x(
      pg, svreinterpret_u32_f32(svadd_f32_x(pg, magnitude, svreinterpret_f32_u32(magic))), magic);
  const svuint32_t binade = svsub_n_u32_x(pg, svlsr_n_u32_x(pg, magic, drop), offset);
  const svuint32_t code = svmin_n_u32_x(pg, svadd_u32_x(pg, count, binade), t.nan_bits);
  // code | (x's sign at bit 7 of x >> 24)
  const svuint32_t sign = svand_n_u32_x(pg, svlsr_n_u32_x(pg, svreinterpret_u32_f32(x), 24), 0x80u);
  return svorr_u32_x(pg, code, sign);
}

template <Fp8Format kFormat>
struct SveFp8 {
  using Element = std::uint8_t;
  static void store(svbool_t pg, std::uint8_t* x, svfloat32_t v) { svst1b_u32(pg, x, fp8_codes<kFormat>(pg, v)); }
};

inline svfloat32_t scaled(svbool_t pg, svfloat32_t y, CacheScale s) {
  if (!s.on) return y;
  return s.divide ? svdiv_n_f32_x(pg, y, s.value) : svmul_n_f32_x(pg, y, s.value);
}

template <typename S>
struct SveWriter {
  using Element = typename S::Element;

  static void plain(const float* x, std::int64_t n, unsigned char* row, CacheScale s) {
    Element* out = reinterpret_cast<Element*>(row);
    for (std::int64_t i = 0; i < n; i += static_cast<std::int64_t>(svcntw())) {
      const svbool_t pg = svwhilelt_b32(i, n);
      S::store(pg, out + i, scaled(pg, svld1_f32(pg, x + i), s));
    }
  }

  // SveLevel's rotation (rotate_pairs; the half-split's mls and mla), read from k.
  static void rotated(const FusedCacheArgs& p, const float* x, unsigned char* row, CacheScale s) {
    Element* out = reinterpret_cast<Element*>(row);
    const float* c = p.table;
    const float* sn = p.table + p.rotary_dim;
    const std::int64_t rotary = p.rotary_dim;
    const auto vl = static_cast<std::int64_t>(svcntw());
    if (p.interleaved) {
      for (std::int64_t j = 0; j < rotary; j += vl) {
        const svbool_t pg = svwhilelt_b32(j, rotary);
        const svfloat32_t y = rotate_pairs(pg, svld1_f32(pg, x + j), svld1_f32(pg, c + j), svld1_f32(pg, sn + j));
        S::store(pg, out + j, scaled(pg, y, s));
      }
    } else {
      const std::int64_t half = rotary / 2;
      for (std::int64_t i = 0; i < half; i += vl) {
        const svbool_t pg = svwhilelt_b32(i, half);
        const svfloat32_t x1 = svld1_f32(pg, x + i), x2 = svld1_f32(pg, x + half + i);
        const svfloat32_t cv = svld1_f32(pg, c + i), sv = svld1_f32(pg, sn + i);
        S::store(pg, out + i, scaled(pg, svmls_f32_x(pg, svmul_f32_x(pg, x1, cv), x2, sv), s));
        S::store(pg, out + half + i, scaled(pg, svmla_f32_x(pg, svmul_f32_x(pg, x2, cv), x1, sv), s));
      }
    }
    if (rotary < p.head_dim) plain(x + rotary, p.head_dim - rotary, row + rotary * sizeof(Element), s);
  }
};

void run(const FusedCacheArgs& p, bool rotate) {
  run_on_storage<SveLevel<SveFp32>, SveWriter, SveFp32, SveBf16, SveFp16, SveFp8<Fp8Format::e4m3>,
                 SveFp8<Fp8Format::e5m2>>(p, rotate);
}

}  // namespace

void fused_rope_cache_sve(const FusedCacheArgs& p) { run(p, true); }
void cache_write_sve(const FusedCacheArgs& p) { run(p, false); }

void fp8_narrow_sve(const float* x, std::uint8_t* out, std::int64_t n, bool e5m2) {
  // The cache writer's own path (predicated vectors), with no scale: what the sweep judges is
  // what a cache row gets.
  auto* row = reinterpret_cast<unsigned char*>(out);
  e5m2 ? SveWriter<SveFp8<Fp8Format::e5m2>>::plain(x, n, row, CacheScale{})
       : SveWriter<SveFp8<Fp8Format::e4m3>>::plain(x, n, row, CacheScale{});
}

}  // namespace ropecheck::kernels
