// The in-place probe at the levels of the build's architecture. x86-64: three, each in a function
// compiled for its own ISA by a target attribute (the file itself is built for baseline x86-64:
// the binary must run on any CPU). aarch64: NEON, the baseline's (every aarch64 CPU has it; an
// SVE probe would move the same bytes, which are the limit, not the lanes).
#include "bench/probes.h"

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

#include <cstddef>
#include <cstdint>

namespace ropecheck::bench {
namespace {

using Probe = void (*)(float*, std::size_t, float);

#if defined(__x86_64__)
// Four vectors in flight per step: enough independent loads to keep the memory system busy.
__attribute__((target("avx512f"))) void scale_avx512(float* x, std::size_t n, float s) {
  const __m512 v = _mm512_set1_ps(s);
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512 a = _mm512_loadu_ps(x + i), b = _mm512_loadu_ps(x + i + 16);
    const __m512 c = _mm512_loadu_ps(x + i + 32), d = _mm512_loadu_ps(x + i + 48);
    _mm512_storeu_ps(x + i, _mm512_mul_ps(a, v));
    _mm512_storeu_ps(x + i + 16, _mm512_mul_ps(b, v));
    _mm512_storeu_ps(x + i + 32, _mm512_mul_ps(c, v));
    _mm512_storeu_ps(x + i + 48, _mm512_mul_ps(d, v));
  }
  for (; i < n; ++i) x[i] *= s;  // every benchmark shape is a multiple of 64: never hot
}

__attribute__((target("avx2"))) void scale_avx2(float* x, std::size_t n, float s) {
  const __m256 v = _mm256_set1_ps(s);
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
    const __m256 c = _mm256_loadu_ps(x + i + 16), d = _mm256_loadu_ps(x + i + 24);
    _mm256_storeu_ps(x + i, _mm256_mul_ps(a, v));
    _mm256_storeu_ps(x + i + 8, _mm256_mul_ps(b, v));
    _mm256_storeu_ps(x + i + 16, _mm256_mul_ps(c, v));
    _mm256_storeu_ps(x + i + 24, _mm256_mul_ps(d, v));
  }
  for (; i < n; ++i) x[i] *= s;
}

// Four accumulators: the adds' latency stays out of the way of the loads.
__attribute__((target("avx512f"))) float read_avx512(const float* x, std::size_t n) {
  __m512 a = _mm512_setzero_ps(), b = a, c = a, d = a;
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    a = _mm512_add_ps(a, _mm512_loadu_ps(x + i));
    b = _mm512_add_ps(b, _mm512_loadu_ps(x + i + 16));
    c = _mm512_add_ps(c, _mm512_loadu_ps(x + i + 32));
    d = _mm512_add_ps(d, _mm512_loadu_ps(x + i + 48));
  }
  // Summed through memory: GCC 12's _mm512_reduce_add_ps trips -Wuninitialized in its header.
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, _mm512_add_ps(_mm512_add_ps(a, b), _mm512_add_ps(c, d)));
  float sum = 0;
  for (const float lane : lanes) sum += lane;
  for (; i < n; ++i) sum += x[i];
  return sum;
}

__attribute__((target("avx512f"))) void fill_avx512(std::byte* out, std::size_t n, std::byte value) {
  const __m512i v = _mm512_set1_epi8(static_cast<char>(value));
  std::size_t i = 0;
  for (; i + 256 <= n; i += 256) {
    for (std::size_t j = 0; j < 256; j += 64) _mm512_storeu_si512(out + i + j, v);
  }
  for (; i < n; ++i) out[i] = value;
}

__attribute__((target("avx2"))) float read_avx2(const float* x, std::size_t n) {
  __m256 a = _mm256_setzero_ps(), b = a, c = a, d = a;
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    a = _mm256_add_ps(a, _mm256_loadu_ps(x + i));
    b = _mm256_add_ps(b, _mm256_loadu_ps(x + i + 8));
    c = _mm256_add_ps(c, _mm256_loadu_ps(x + i + 16));
    d = _mm256_add_ps(d, _mm256_loadu_ps(x + i + 24));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, _mm256_add_ps(_mm256_add_ps(a, b), _mm256_add_ps(c, d)));
  float sum = 0;
  for (const float lane : lanes) sum += lane;
  for (; i < n; ++i) sum += x[i];
  return sum;
}

__attribute__((target("avx2"))) void fill_avx2(std::byte* out, std::size_t n, std::byte value) {
  const __m256i v = _mm256_set1_epi8(static_cast<char>(value));
  std::size_t i = 0;
  for (; i + 128 <= n; i += 128) {
    for (std::size_t j = 0; j < 128; j += 32) _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i + j), v);
  }
  for (; i < n; ++i) out[i] = value;
}

#endif

#if defined(__aarch64__)
// As the x86 probes: four vectors in flight a step, four accumulators.
void scale_neon(float* x, std::size_t n, float s) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const float32x4_t a = vld1q_f32(x + i), b = vld1q_f32(x + i + 4);
    const float32x4_t c = vld1q_f32(x + i + 8), d = vld1q_f32(x + i + 12);
    vst1q_f32(x + i, vmulq_n_f32(a, s));
    vst1q_f32(x + i + 4, vmulq_n_f32(b, s));
    vst1q_f32(x + i + 8, vmulq_n_f32(c, s));
    vst1q_f32(x + i + 12, vmulq_n_f32(d, s));
  }
  for (; i < n; ++i) x[i] *= s;
}

float read_neon(const float* x, std::size_t n) {
  float32x4_t a = vdupq_n_f32(0), b = a, c = a, d = a;
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    a = vaddq_f32(a, vld1q_f32(x + i));
    b = vaddq_f32(b, vld1q_f32(x + i + 4));
    c = vaddq_f32(c, vld1q_f32(x + i + 8));
    d = vaddq_f32(d, vld1q_f32(x + i + 12));
  }
  float sum = vaddvq_f32(vaddq_f32(vaddq_f32(a, b), vaddq_f32(c, d)));
  for (; i < n; ++i) sum += x[i];
  return sum;
}

void fill_neon(std::byte* out, std::size_t n, std::byte value) {
  const uint8x16_t v = vdupq_n_u8(static_cast<std::uint8_t>(value));
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    for (std::size_t j = 0; j < 64; j += 16) vst1q_u8(reinterpret_cast<std::uint8_t*>(out + i + j), v);
  }
  for (; i < n; ++i) out[i] = value;
}
#endif

void scale_plain(float* x, std::size_t n, float s) {
  for (std::size_t i = 0; i < n; ++i) x[i] *= s;
}

float read_plain(const float* x, std::size_t n) {
  float sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += x[i];
  return sum;
}

void fill_plain(std::byte* out, std::size_t n, std::byte value) {
  for (std::size_t i = 0; i < n; ++i) out[i] = value;
}

struct Level {
  Probe probe;
  std::string_view isa;
  float (*read)(const float*, std::size_t);
  void (*fill)(std::byte*, std::size_t, std::byte);
};

// The CPU's, not ROPECHECK_ISA: the probe is the machine's limit even when the kernels are pinned
// low.
const Level& best_level() {
  static const Level level = [] {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return Level{scale_avx512, "avx512f", read_avx512, fill_avx512};
    if (__builtin_cpu_supports("avx2")) return Level{scale_avx2, "avx2", read_avx2, fill_avx2};
#elif defined(__aarch64__)
    return Level{scale_neon, "neon", read_neon, fill_neon};
#endif
    return Level{scale_plain, "scalar", read_plain, fill_plain};
  }();
  return level;
}

}  // namespace

void inplace_scale(std::span<float> x, float s) { best_level().probe(x.data(), x.size(), s); }

float stream_read(std::span<const float> x) { return best_level().read(x.data(), x.size()); }

void stream_fill(std::span<std::byte> out, std::byte value) { best_level().fill(out.data(), out.size(), value); }

std::string_view inplace_scale_isa() { return best_level().isa; }

}  // namespace ropecheck::bench
