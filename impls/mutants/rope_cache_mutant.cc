// RopeCacheMutant (rope_cache_mutant.h): the correct fused call its mutants change one hook of.
#include "impls/mutants/rope_cache_mutant.h"

#include <algorithm>
#include <vector>

namespace ropecheck {
std::unique_ptr<RopeImpl> make_rotate_half_scalar();
}

namespace ropecheck::mutants {

RopeCacheMutant::RopeCacheMutant() : rotation_(make_rotate_half_scalar()) {}

RopeCacheCapabilities RopeCacheMutant::capabilities() const {
  return every_cache_mode(declared_padding());
}

RopeCapabilities RopeCacheMutant::rope_capabilities() const {
  RopeCapabilities caps = rotation_->capabilities();
  caps.passes = {Pass::forward};
  return caps;
}

float RopeCacheMutant::to_stored(float x, float scale, ScaleDirection direction, bool) const {
  return direction == ScaleDirection::multiply ? x * scale : x / scale;
}

void RopeCacheMutant::run(const RopeCacheCall& call) const {
  const KvCacheSpec& cache = call.cache;
  const bool mla = cache.layout == CacheLayout::mla;
  const std::int64_t dim = call.spec.head_dim, v_dim = mla ? cache.latent_dim : dim;
  const std::vector<float> q_before(call.q.begin(), call.q.end());
  std::vector<float> k(call.k.begin(), call.k.end());
  rotation_->apply(call.spec, HeadTensor{call.q, call.tokens, call.q_heads, dim},
                   HeadTensor{std::span<float>(k), call.tokens, cache.kv_heads, dim}, call.positions);
  const auto q_row = static_cast<std::ptrdiff_t>(call.q_heads * dim);
  for (std::int64_t t = 0; t < call.tokens; ++t) {
    const std::int64_t slot = call.slots[static_cast<std::size_t>(t)];
    if (slot < 0 && declared_padding() == PaddingRule::skip_token && !rotates_padding_q()) {
      std::copy_n(q_before.begin() + t * q_row, q_row, call.q.begin() + t * q_row);
    }
    if (!writes(slot)) continue;
    for (std::int64_t h = 0; h < cache.kv_heads; ++h) {
      const auto k_scale = static_cast<float>(cache_scale(cache, true, h));
      const auto v_scale = static_cast<float>(cache_scale(cache, false, h));
      const std::span<std::byte> v_target = mla ? call.k_cache : call.v_cache;
      const auto v_row = call.v.subspan(static_cast<std::size_t>((t * cache.kv_heads + h) * v_dim),
                                        static_cast<std::size_t>(v_dim));
      for (std::int64_t f = 0; f < v_dim; ++f) {
        narrow(cache.storage, v_target, element(cache, slot, h, f),
               to_stored(v_row[static_cast<std::size_t>(f)], v_scale, cache.scale_direction, false));
      }
      // k's row: the rotated k, or (the mix-up) v as it came; under mla, whose v is the latent,
      // the k_pe as it came.
      const auto at = static_cast<std::size_t>((t * cache.kv_heads + h) * dim);
      const std::span<const float> k_row =
          !k_from_v() ? std::span<const float>(k).subspan(at, static_cast<std::size_t>(dim))
                      : mla ? call.k.subspan(at, static_cast<std::size_t>(dim)) : v_row;
      const std::int64_t k_offset = mla ? cache.latent_dim : 0;
      for (std::int64_t f = 0; f < dim; ++f) {
        narrow(cache.storage, call.k_cache, element(cache, slot, h, k_offset + f),
               to_stored(k_row[static_cast<std::size_t>(f)], k_scale, cache.scale_direction, true));
      }
    }
  }
}

}  // namespace ropecheck::mutants
