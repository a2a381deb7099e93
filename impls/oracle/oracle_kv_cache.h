// The float64 truth of a fused RoPE call that writes the paged KV cache (core/kv_cache.h, issue
// 56): q and k rotated by oracle_rope() (the same truth as every other form), the rotated k and
// the v as they came scaled into the cache's stored domain at the rows their slots address.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/kv_cache.h"
#include "core/spec.h"
#include "core/tensor.h"

namespace ropecheck {

struct FusedCacheTruth {
  // q as the call must leave it: rotated, but a padding token's as it came under skip_token.
  std::vector<double> q;
  // Per cache element (cache_index order), what the write puts there in the stored domain, before
  // narrowing to the storage: to_stored_domain(value, scale, direction). 0 where not written.
  std::vector<double> k_cache, v_cache;  // mla: one cache, in k_cache; v_cache empty
  // Per cache element: addressed by a valid slot. The rest must keep their bits.
  std::vector<bool> written;
};

// q: [tokens][q_heads][head_dim]; k, v: [tokens][kv_heads][head_dim]. For mla: k is k_pe,
// [tokens][1][head_dim] (rotated), v is the latent kv_c, [tokens][1][latent_dim] (not rotated);
// the spec's head_dim is k_pe's. slots: one per token, below 0 for padding. Throws InvalidInput
// for a spec, a cache, shapes or slots that cannot be (validate, validate_cache, validate_slots).
FusedCacheTruth oracle_rope_and_cache(const RopeSpec& spec, const KvCacheSpec& cache, std::span<const float> q,
                                      std::int64_t q_heads, std::span<const float> k, std::span<const float> v,
                                      std::int64_t tokens, PositionIds positions,
                                      std::span<const std::int64_t> slots);

}  // namespace ropecheck
