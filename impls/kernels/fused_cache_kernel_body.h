// What every level of the fused RoPE + KV-cache kernel (fused_cache_kernel.h) shares: where a
// token's cache rows are, the token loop, and the level made fused. A level's file provides a
// Writer<Out> (Out: how the cache stores an element) with
//   rotated(p, k_row, cache_row, scale)  k's row rotated with the row at p.table (the level's own
//                                        arithmetic), features past rotary_dim as they are, each
//                                        scaled and narrowed into the cache row;
//   plain(x, n, cache_row, scale)        n floats scaled and narrowed into the cache row.
// Include it ONLY from the levels' files (internal linkage: each gets its own copy, compiled for
// its own level).
#pragma once

#include <cstdint>

#include "impls/kernels/fused_cache_kernel.h"
#include "impls/kernels/rope_kernel.h"

namespace ropecheck::kernels {
namespace {

// A row's FP8 scale; `on` false: none (not FP8), the value stored as it is.
struct CacheScale {
  float value = 1.0f;
  bool on = false;
  bool divide = false;
};

inline CacheScale scale_of(const float* scales, int stride, std::int64_t head, bool divide) {
  if (scales == nullptr) return {};
  return {scales[stride * head], true, divide};
}

// Where a slot's rows are (core/kv_cache.h's cache_index, feature 0): head h's row is
// first_row + h * head_stride rows into a cache. Found once per token, not per head and cache:
// two 64-bit divides per row were a per-row cost the memory streams did not hide.
struct SlotRows {
  std::int64_t first_row, head_stride, row_bytes;
  unsigned char* at(unsigned char* cache, std::int64_t head) const {
    return cache + (first_row + head * head_stride) * row_bytes;
  }
};

inline SlotRows slot_rows(const FusedCacheArgs& p, std::int64_t slot) {
  const std::int64_t block = slot / p.block_size, offset = slot % p.block_size;
  const std::int64_t row_bytes = p.row_features * cache_code_bytes(p.storage);
  if (p.head_major) return {block * p.k_heads * p.block_size + offset, p.block_size, row_bytes};
  return {(block * p.block_size + offset) * p.k_heads, 1, row_bytes};
}

// Token t's rows into the cache, if its slot is valid: v's (mla: the latent, first in the row),
// then k's, rotated or (the write pass alone) as it is.
template <typename W>
void write_token_rows(const FusedCacheArgs& p, std::int64_t t, bool rotate) {
  const std::int64_t slot = p.slots[t];
  if (slot < 0) return;  // padding: nothing of it reaches the cache
  const int bytes = cache_code_bytes(p.storage);
  const SlotRows rows = slot_rows(p, slot);
  for (std::int64_t h = 0; h < p.k_heads; ++h) {
    const float* k = p.k + (t * p.k_heads + h) * p.head_dim;
    const float* v = p.v + (t * p.k_heads + h) * p.v_dim;
    W::plain(v, p.v_dim, rows.at(p.v_cache, h) + p.v_offset * bytes, scale_of(p.v_scale, p.v_scale_stride, h, p.divide));
    unsigned char* k_row = rows.at(p.k_cache, h) + p.k_offset * bytes;
    const CacheScale k_scale = scale_of(p.k_scale, p.k_scale_stride, h, p.divide);
    if (rotate) {
      W::rotated(p, k, k_row, k_scale);
    } else {
      W::plain(k, p.head_dim, k_row, k_scale);
    }
  }
}

// The level Base (its rows, its q rotation) made fused: run_tokens (rope_kernel.h) forms each
// token's row as kernel/<level> does, then q is rotated by Base itself and k and v go to the cache.
template <typename Base, typename W>
struct FusedLevel : Base {
  template <typename Args>
  static void rotate_token(const Args& p, float* q, std::int64_t q_heads, float* k, std::int64_t k_heads) {
    (void)k;
    (void)k_heads;
    if constexpr (requires { Base::rotate_token(p, q, q_heads, q, std::int64_t{0}); }) {
      Base::rotate_token(p, q, q_heads, q, 0);  // q's heads, no k
    } else {
      Base::rotate(p, q, q_heads);
    }
    write_token_rows<W>(p, (q - p.q) / (q_heads * p.head_dim), true);
  }
};

// The fused call (rotate) or the write pass alone, on the cache's storage: Writer<Out> for each.
template <typename Base, template <typename> class Writer, typename Fp32, typename Bf16, typename Fp16,
          typename E4m3, typename E5m2>
void run_on_storage(const FusedCacheArgs& p, bool rotate) {
  const auto run = [&](auto writer) {
    using W = decltype(writer);
    if (rotate) {
      run_tokens<FusedLevel<Base, W>>(p);
    } else {
      for (std::int64_t t = 0; t < p.tokens; ++t) write_token_rows<W>(p, t, false);
    }
  };
  switch (p.storage) {
    case CacheCode::fp32: return run(Writer<Fp32>{});
    case CacheCode::bf16: return run(Writer<Bf16>{});
    case CacheCode::fp16: return run(Writer<Fp16>{});
    case CacheCode::fp8_e4m3: return run(Writer<E4m3>{});
    case CacheCode::fp8_e5m2: return run(Writer<E5m2>{});
  }
}

}  // namespace
}  // namespace ropecheck::kernels
