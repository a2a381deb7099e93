// The fast RoPE algorithm (rope_kernel.h) with AVX2 + FMA intrinsics: 8 floats a vector, 4 angles
// a SLEEF call, masked loads/stores (vmaskmov) for every remainder. Compiled with -mavx2 -mfma
// (CMake object library); only called after cpuid says so.
#include <immintrin.h>
#include <sleef.h>

#include "rope_kernel.h"

namespace ropecheck::kernels {
namespace {

// Lanes [0, remaining) set: compare the lane index with the count.
__m256i mask8(int remaining) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(remaining), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

__m256i mask4_pd(int remaining) {
  return _mm256_cmpgt_epi64(_mm256_set1_epi64x(remaining), _mm256_setr_epi64x(0, 1, 2, 3));
}

// cos/sin of scale * theta_i into (cos_out, sin_out), 4 doubles a vector (the last masked).
void sincos_of_theta(const RopeKernelProblem& p, double scale, double* cos_out, double* sin_out) {
  const int half = p.rotary_dim / 2;
  const __m256d factor = _mm256_set1_pd(scale);
  for (int i = 0; i < half; i += 4) {
    const __m256i lanes = mask4_pd(half - i);
    const __m256d angle = _mm256_mul_pd(factor, _mm256_maskload_pd(p.theta + i, lanes));
    const Sleef___m256d_2 sc = Sleef_sincosd4_u35avx2(angle);
    _mm256_maskstore_pd(sin_out + i, lanes, sc.x);
    _mm256_maskstore_pd(cos_out + i, lanes, sc.y);
  }
}

void advance_angles(const RopeKernelProblem& p) {
  const AngleState a = angle_state(p);
  const int half = p.rotary_dim / 2;
  for (int i = 0; i < half; i += 4) {
    const __m256i lanes = mask4_pd(half - i);
    const __m256d c = _mm256_maskload_pd(a.cos_m + i, lanes), s = _mm256_maskload_pd(a.sin_m + i, lanes);
    const __m256d cs = _mm256_maskload_pd(a.cos_step + i, lanes);
    const __m256d ss = _mm256_maskload_pd(a.sin_step + i, lanes);
    _mm256_maskstore_pd(a.cos_m + i, lanes, _mm256_fmsub_pd(c, cs, _mm256_mul_pd(s, ss)));
    _mm256_maskstore_pd(a.sin_m + i, lanes, _mm256_fmadd_pd(s, cs, _mm256_mul_pd(c, ss)));
  }
}

// The AngleState rounded to fp32 into the table layout of rope_kernel.h.
void emit_table(const RopeKernelProblem& p) {
  const AngleState a = angle_state(p);
  const int half = p.rotary_dim / 2;
  float* cos_table = p.table;
  float* sin_table = p.table + p.rotary_dim;
  const __m256i duplicate = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
  const __m256 even_negative = _mm256_setr_ps(-1, 1, -1, 1, -1, 1, -1, 1);
  for (int i = 0; i < half; i += 4) {
    const __m256i lanes_pd = mask4_pd(half - i);
    const __m256d scale = _mm256_set1_pd(p.cos_sin_scale);
    const __m128 c = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_maskload_pd(a.cos_m + i, lanes_pd), scale));
    const __m128 s = _mm256_cvtpd_ps(_mm256_mul_pd(_mm256_maskload_pd(a.sin_m + i, lanes_pd), scale));
    if (p.interleaved) {
      const __m256 c2 = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(c), duplicate);
      const __m256 s2 = _mm256_mul_ps(_mm256_permutevar8x32_ps(_mm256_castps128_ps256(s), duplicate),
                                      even_negative);  // exact: a sign flip
      const __m256i lanes = mask8(2 * (half - i));
      _mm256_maskstore_ps(cos_table + 2 * i, lanes, c2);
      _mm256_maskstore_ps(sin_table + 2 * i, lanes, s2);
    } else {
      const __m128i lanes = _mm256_castsi256_si128(mask8(half - i));
      _mm_maskstore_ps(cos_table + i, lanes, c);
      _mm_maskstore_ps(sin_table + i, lanes, s);
    }
  }
}

inline __m256 rotate_pairs(__m256 v, __m256 c, __m256 s) {
  const __m256 swapped = _mm256_permute_ps(v, 0xB1);  // (x0 x1 x2 x3) -> (x1 x0 x3 x2)
  return _mm256_fmadd_ps(swapped, s, _mm256_mul_ps(v, c));
}

void rotate_interleaved(const RopeKernelProblem& p, float* x) {
  const float* c = p.table;
  const float* s = p.table + p.rotary_dim;
  int j = 0;
  // Full vectors with plain loads and stores: vmaskmov stores are slow on AMD cores.
  for (; j + 8 <= p.rotary_dim; j += 8) {
    _mm256_storeu_ps(x + j, rotate_pairs(_mm256_loadu_ps(x + j), _mm256_loadu_ps(c + j),
                                         _mm256_loadu_ps(s + j)));
  }
  if (j < p.rotary_dim) {
    const __m256i lanes = mask8(p.rotary_dim - j);
    _mm256_maskstore_ps(x + j, lanes,
                        rotate_pairs(_mm256_maskload_ps(x + j, lanes), _mm256_maskload_ps(c + j, lanes),
                                     _mm256_maskload_ps(s + j, lanes)));
  }
}

void rotate_half_split(const RopeKernelProblem& p, float* x) {
  const int half = p.rotary_dim / 2;
  const float* c = p.table;
  const float* s = p.table + p.rotary_dim;
  const auto rotate = [&](int i, __m256i lanes, bool full) {
    const auto load = [&](const float* at) { return full ? _mm256_loadu_ps(at) : _mm256_maskload_ps(at, lanes); };
    const __m256 x1 = load(x + i), x2 = load(x + half + i), cv = load(c + i), sv = load(s + i);
    const __m256 y1 = _mm256_fnmadd_ps(x2, sv, _mm256_mul_ps(x1, cv));
    const __m256 y2 = _mm256_fmadd_ps(x1, sv, _mm256_mul_ps(x2, cv));
    if (full) {
      _mm256_storeu_ps(x + i, y1);
      _mm256_storeu_ps(x + half + i, y2);
    } else {
      _mm256_maskstore_ps(x + i, lanes, y1);
      _mm256_maskstore_ps(x + half + i, lanes, y2);
    }
  };
  int i = 0;
  for (; i + 8 <= half; i += 8) rotate(i, _mm256_set1_epi32(-1), true);
  if (i < half) rotate(i, mask8(half - i), false);
}

struct Avx2Level {
  static void exact(const RopeKernelProblem& p, double m) {
    const AngleState a = angle_state(p);
    sincos_of_theta(p, m, a.cos_m, a.sin_m);
    emit_table(p);
  }
  static void step(const RopeKernelProblem& p) {
    const AngleState a = angle_state(p);
    sincos_of_theta(p, 1.0, a.cos_step, a.sin_step);
  }
  static void advance(const RopeKernelProblem& p) {
    advance_angles(p);
    emit_table(p);
  }
  static void rotate(const RopeKernelProblem& p, float* rows, std::int64_t heads) {
    for (std::int64_t h = 0; h < heads; ++h) {
      p.interleaved ? rotate_interleaved(p, rows + h * p.head_dim)
                    : rotate_half_split(p, rows + h * p.head_dim);
    }
  }
};

}  // namespace

void rope_kernel_avx2(const RopeKernelProblem& p) { run_tokens<Avx2Level>(p); }

}  // namespace ropecheck::kernels
