// What the AVX-512 RoPE kernel's rotations share, whatever the storage: lane masks for
// remainders, one token's rows of q or k, and tile counts as compile-time constants. Include it
// ONLY from files compiled with AVX-512 flags (internal linkage: each such file gets its own copy).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace ropecheck::kernels {
namespace {

inline __mmask8 mask8(int remaining) {
  return remaining >= 8 ? static_cast<__mmask8>(0xFF) : static_cast<__mmask8>((1u << remaining) - 1u);
}

inline __mmask16 mask16(int remaining) {
  if (remaining <= 0) return 0;
  return remaining >= 16 ? static_cast<__mmask16>(0xFFFF)
                         : static_cast<__mmask16>((1u << remaining) - 1u);
}

inline __mmask32 mask32(int remaining) {
  return remaining >= 32 ? static_cast<__mmask32>(0xFFFFFFFFu)
                         : static_cast<__mmask32>((1u << remaining) - 1u);
}

// Rotating one token's heads. Zen 4 (and most cores) load at most one 512-bit vector a cycle, so
// loading x, cos and sin per vector would make the loop load-bound; instead cos/sin of up to
// kChunkTiles tiles stay in registers (2 * 8 of the 32 zmm) while every head's segment of those
// tiles is rotated: one load and one store per vector, heads visited in address order. A
// remainder tile rides along with masked loads/stores; full tiles use plain ones: masked stores
// are slow on some cores (Zen 4).
constexpr int kChunkTiles = 8;

// One token's q or k: `heads` consecutive head vectors.
template <typename S>
struct Rows {
  typename S::Element* rows;
  std::int64_t heads;
};

template <int N>
struct TileCount {
  static constexpr int value = N;
};

// Calls f(TileCount<n>{}) for n = min(count, Max): the tile loops then have constant trip counts
// and unroll fully, which keeps cos/sin in registers.
template <int Max, typename F>
void with_tile_count(int count, F&& f) {
  if constexpr (Max == 0) {
    f(TileCount<0>{});
  } else if (count >= Max) {
    f(TileCount<Max>{});
  } else {
    with_tile_count<Max - 1>(count, f);
  }
}

}  // namespace
}  // namespace ropecheck::kernels
