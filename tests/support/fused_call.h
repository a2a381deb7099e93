// One fused RoPE + KV-cache call's buffers, owned, and the fills the fused-call tests share: what
// the kernel, two-pass, oracle, plugin, Python, peer and check tests each had a copy of. Each test
// keeps its own shapes, slots and values; only the plumbing is here.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/kv_cache.h"
#include "impls/fused/rope_cache_impl.h"

namespace ropecheck::test {

// The inputs of one call, and the caches it writes (the fill before the call until it runs).
struct FusedCallBuffers {
  RopeSpec spec;
  KvCacheSpec cache;
  std::int64_t tokens = 0, q_heads = 0;
  std::vector<float> q, k, v;
  std::vector<std::int64_t> positions, slots;
  std::vector<std::byte> k_cache, v_cache;  // mla: v_cache empty

  // The call over these buffers: q and the caches are written in place.
  RopeCacheCall call() {
    RopeCacheCall c;
    c.spec = spec;
    c.cache = cache;
    c.q = q;
    c.q_heads = q_heads;
    c.k = k;
    c.v = v;
    c.tokens = tokens;
    c.positions = positions;
    c.slots = slots;
    c.k_cache = k_cache;
    c.v_cache = v_cache;
    return c;
  }
};

// The small call the oracle and two-pass tests check element by element: six tokens, q_heads 4,
// on a cache of 4 blocks of 4 slots (kv_heads 2, head_dim 8; mla: one latent row of 6 and k_pe
// 8), RoPE head_dim 8 fully rotated. Its slots cross a block boundary (3 -> 4), share block 2,
// leave gaps, run out of order, and two are padding; FP8 scales: k 0.5 and 0.25 per head (mla:
// 0.5), v 2. The values and the caches' fill are each test's own.
inline FusedCallBuffers small_paged_call(CacheLayout layout, CacheStorage storage,
                                         ScaleDirection direction = ScaleDirection::divide,
                                         PaddingRule padding = PaddingRule::skip_token) {
  FusedCallBuffers b;
  const bool mla = layout == CacheLayout::mla;
  b.cache.layout = layout;
  b.cache.storage = storage;
  b.cache.blocks = 4;
  b.cache.block_size = 4;
  b.cache.kv_heads = mla ? 1 : 2;
  b.cache.head_dim = 8;
  b.cache.latent_dim = mla ? 6 : 0;
  b.cache.scale_direction = direction;
  b.cache.padding = padding;
  if (is_fp8(storage)) {
    b.cache.k_scale = mla ? std::vector<float>{0.5f} : std::vector<float>{0.5f, 0.25f};
    if (!mla) b.cache.v_scale = {2.0f};
  }
  b.spec.head_dim = 8;
  b.spec.rotary_dim = 8;
  b.tokens = 6;
  b.q_heads = 4;
  b.slots = {9, 3, -1, 4, 10, -1};
  b.positions = {7, 0, 3, 1, 5, 2};
  return b;
}

inline std::size_t cache_bytes(const KvCacheSpec& cache) {
  return static_cast<std::size_t>(cache_elements(cache) * element_bytes(cache.storage));
}

// Both caches sized for `b.cache`, each byte next_byte()'s (k's first, then v's; mla: no v cache),
// so that a test's random fill draws what it drew before and a sentinel fill is one lambda.
template <typename NextByte>
void fill_caches(FusedCallBuffers& b, NextByte next_byte) {
  const std::size_t bytes = cache_bytes(b.cache);
  b.k_cache.resize(bytes);
  for (std::byte& e : b.k_cache) e = next_byte();
  b.v_cache.clear();
  if (b.cache.layout == CacheLayout::mla) return;
  b.v_cache.resize(bytes);
  for (std::byte& e : b.v_cache) e = next_byte();
}

inline void fill_caches_with(FusedCallBuffers& b, std::byte sentinel) {
  fill_caches(b, [sentinel] { return sentinel; });
}

// amplitude * sin(phase + step * i): smooth values of both signs, no two neighbours equal; each
// test keeps its own step and amplitude (the amplitude decides whether FP8 saturates).
inline std::vector<float> sine_values(std::size_t n, float phase, float step, float amplitude) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = amplitude * std::sin(phase + step * static_cast<float>(i));
  return x;
}

}  // namespace ropecheck::test
