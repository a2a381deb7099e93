// oracle_rope_and_cache (oracle_kv_cache.h): the fused call's truth, from the one RoPE truth.
#include "impls/oracle/oracle_kv_cache.h"

#include <fmt/format.h>

#include "core/errors.h"
#include "impls/oracle/oracle.h"

namespace ropecheck {

FusedCacheTruth oracle_rope_and_cache(const RopeSpec& spec, const KvCacheSpec& cache, std::span<const float> q,
                                      std::int64_t q_heads, std::span<const float> k, std::span<const float> v,
                                      std::int64_t tokens, PositionIds positions,
                                      std::span<const std::int64_t> slots) {
  validate_cache(cache);
  if (spec.head_dim != cache.head_dim) {
    throw InvalidInput(fmt::format("fused cache call: the spec's head_dim {} is not the cache's {}", spec.head_dim,
                                   cache.head_dim));
  }
  const bool mla = cache.layout == CacheLayout::mla;
  const std::int64_t v_dim = mla ? cache.latent_dim : cache.head_dim;
  if (static_cast<std::int64_t>(v.size()) != tokens * cache.kv_heads * v_dim) {
    throw InvalidInput(fmt::format("fused cache call: v has {} elements; {} tokens x {} kv heads x {} are {}", v.size(),
                                   tokens, cache.kv_heads, v_dim, tokens * cache.kv_heads * v_dim));
  }
  if (static_cast<std::int64_t>(slots.size()) != tokens) {
    throw InvalidInput(fmt::format("fused cache call: {} slots for {} tokens", slots.size(), tokens));
  }
  validate_slots(cache, slots);

  FusedCacheTruth truth;
  truth.q = oracle_rope(spec, q, tokens, q_heads, positions);  // validates q and the positions
  const std::vector<double> k_rotated = oracle_rope(spec, k, tokens, cache.kv_heads, positions);
  if (cache.padding == PaddingRule::skip_token) {
    const auto row = static_cast<std::size_t>(q_heads * spec.head_dim);
    for (std::int64_t t = 0; t < tokens; ++t) {
      if (slots[static_cast<std::size_t>(t)] >= 0) continue;
      const auto first = static_cast<std::size_t>(t) * row;
      for (std::size_t i = first; i < first + row; ++i) truth.q[i] = q[i];
    }
  }

  const auto elements = static_cast<std::size_t>(cache_elements(cache));
  truth.k_cache.assign(elements, 0.0);
  if (!mla) truth.v_cache.assign(elements, 0.0);
  truth.written.assign(elements, false);
  for (std::int64_t t = 0; t < tokens; ++t) {
    const std::int64_t slot = slots[static_cast<std::size_t>(t)];
    if (slot < 0) continue;
    for (std::int64_t h = 0; h < cache.kv_heads; ++h) {
      const double k_scale = cache_scale(cache, true, h), v_scale = cache_scale(cache, false, h);
      const auto k_row = static_cast<std::size_t>((t * cache.kv_heads + h) * cache.head_dim);
      const auto v_row = static_cast<std::size_t>((t * cache.kv_heads + h) * v_dim);
      // mla: the latent first (v's place), then the rotated k_pe.
      const std::int64_t k_offset = mla ? cache.latent_dim : 0;
      for (std::int64_t f = 0; f < cache.head_dim; ++f) {
        const auto at = static_cast<std::size_t>(cache_index(cache, slot, h, k_offset + f));
        truth.k_cache[at] = to_stored_domain(k_rotated[k_row + static_cast<std::size_t>(f)], k_scale,
                                             cache.scale_direction);
        truth.written[at] = true;
      }
      for (std::int64_t f = 0; f < v_dim; ++f) {
        const auto at = static_cast<std::size_t>(cache_index(cache, slot, h, f));
        const double stored = to_stored_domain(v[v_row + static_cast<std::size_t>(f)], v_scale, cache.scale_direction);
        (mla ? truth.k_cache : truth.v_cache)[at] = stored;
        truth.written[at] = true;
      }
    }
  }
  return truth;
}

}  // namespace ropecheck
