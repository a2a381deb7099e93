// The in-place probe at three levels, each in a function compiled for its own ISA by a target
// attribute (the file itself is built for baseline x86-64: the binary must run on any CPU).
#include "bench/probes.h"

#include <immintrin.h>

#include <cstddef>

namespace ropecheck::bench {
namespace {

using Probe = void (*)(float*, std::size_t, float);

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

void scale_plain(float* x, std::size_t n, float s) {
  for (std::size_t i = 0; i < n; ++i) x[i] *= s;
}

struct Level {
  Probe probe;
  std::string_view isa;
};

// cpuid, not ROPECHECK_ISA: the probe is the machine's limit even when the kernels are pinned low.
const Level& best_level() {
  static const Level level = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return Level{scale_avx512, "avx512f"};
    if (__builtin_cpu_supports("avx2")) return Level{scale_avx2, "avx2"};
    return Level{scale_plain, "scalar"};
  }();
  return level;
}

}  // namespace

void inplace_scale(std::span<float> x, float s) { best_level().probe(x.data(), x.size(), s); }

std::string_view inplace_scale_isa() { return best_level().isa; }

}  // namespace ropecheck::bench
