// The fused RoPE + KV-cache kernel (fused_cache_kernel.h) in portable C++: the scalar level's rows
// and q rotation (rope_kernel_scalar_body.h), k rotated with ScalarLevel's arithmetic, element
// by element, and narrowed by the scalar truths (storage.h, core/fp8.h).
#include <cstring>

#include "core/fp8.h"
#include "impls/kernels/fused_cache_kernel_body.h"
#include "impls/kernels/rope_kernel_scalar_body.h"

namespace ropecheck::kernels {
namespace {

inline float scaled(float y, CacheScale s) {
  if (!s.on) return y;
  return s.divide ? y / s.value : y * s.value;
}

// One element narrowed into the cache's storage at element i of a row.
template <CacheCode kCode>
struct ScalarOut {
  static void put(unsigned char* row, std::int64_t i, float y) {
    if constexpr (kCode == CacheCode::fp32) {
      std::memcpy(row + 4 * i, &y, 4);
    } else if constexpr (kCode == CacheCode::bf16) {
      const std::uint16_t bits = bf16_from_float(y);
      std::memcpy(row + 2 * i, &bits, 2);
    } else if constexpr (kCode == CacheCode::fp16) {
      const Fp16 half = fp16_from_float(y);
      std::memcpy(row + 2 * i, &half.bits, 2);
    } else {
      row[i] = fp8_from_float(y, kCode == CacheCode::fp8_e4m3 ? Fp8Format::e4m3 : Fp8Format::e5m2);
    }
  }
};

template <typename Out>
struct ScalarWriter {
  static void plain(const float* x, std::int64_t n, unsigned char* row, CacheScale s) {
    for (std::int64_t i = 0; i < n; ++i) Out::put(row, i, scaled(x[i], s));
  }
  // ScalarLevel::rotate's arithmetic, read from k and written to the row.
  static void rotated(const FusedCacheArgs& p, const float* x, unsigned char* row, CacheScale s) {
    const float* c = p.table;
    const float* sn = p.table + p.rotary_dim;
    if (p.interleaved) {
      for (int j = 0; j < p.rotary_dim; j += 2) {
        const float a = x[j], b = x[j + 1];
        Out::put(row, j, scaled(a * c[j] + b * sn[j], s));
        Out::put(row, j + 1, scaled(b * c[j + 1] + a * sn[j + 1], s));
      }
    } else {
      const int half = p.rotary_dim / 2;
      for (int i = 0; i < half; ++i) {
        const float a = x[i], b = x[i + half];
        Out::put(row, i, scaled(a * c[i] - b * sn[i], s));
        Out::put(row, i + half, scaled(b * c[i] + a * sn[i], s));
      }
    }
    for (std::int64_t f = p.rotary_dim; f < p.head_dim; ++f) Out::put(row, f, scaled(x[f], s));
  }
};

void run(const FusedCacheArgs& p, bool rotate) {
  run_on_storage<ScalarLevel, ScalarWriter, ScalarOut<CacheCode::fp32>, ScalarOut<CacheCode::bf16>,
                 ScalarOut<CacheCode::fp16>, ScalarOut<CacheCode::fp8_e4m3>, ScalarOut<CacheCode::fp8_e5m2>>(p, rotate);
}

}  // namespace

void fused_rope_cache_scalar(const FusedCacheArgs& p) { run(p, true); }
void cache_write_scalar(const FusedCacheArgs& p) { run(p, false); }

}  // namespace ropecheck::kernels
