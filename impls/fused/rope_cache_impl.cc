// RopeCacheImpl::apply (rope_cache_impl.h): every check before a fused call runs.
#include "impls/fused/rope_cache_impl.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/errors.h"
#include "core/position_axes.h"

namespace ropecheck {
namespace {

template <typename T>
bool contains(const std::vector<T>& values, T value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

void expect_size(std::size_t got, std::int64_t want, const char* what) {
  if (static_cast<std::int64_t>(got) != want) {
    throw InvalidInput(fmt::format("fused cache call: {} has {} elements, the call's shape needs {}", what, got, want));
  }
}

// "slots [3, -1, 17, ...]": the first 16 slots, and a count beyond them.
std::string slots_text(std::span<const std::int64_t> slots) {
  constexpr std::size_t kShown = 16;
  const std::size_t shown = std::min(slots.size(), kShown);
  std::string text = fmt::format("slots [{}", fmt::join(slots.first(shown), ", "));
  if (slots.size() > shown) text += fmt::format(", ... {} in all", slots.size());
  return text + "]";
}

}  // namespace

std::string describe(const RopeCacheCall& call) {
  const KvCacheSpec& c = call.cache;
  std::string scale;
  if (is_fp8(c.storage)) {
    scale = fmt::format(", k_scale [{}]{}, {}d", fmt::join(c.k_scale, ", "),
                        c.v_scale.empty() ? "" : fmt::format(", v_scale [{}]", fmt::join(c.v_scale, ", ")),
                        to_string(c.scale_direction));
  }
  return fmt::format("{}; {} {} cache of {} blocks of {}, kv_heads {}, head_dim {}{}{}, padding {}; tokens {}, q_heads {}, {}",
                     describe(call.spec), to_string(c.layout), to_string(c.storage), c.blocks, c.block_size,
                     c.kv_heads, c.head_dim,
                     c.layout == CacheLayout::mla ? fmt::format(", latent_dim {}", c.latent_dim) : "", scale,
                     to_string(c.padding), call.tokens, call.q_heads, slots_text(call.slots));
}

RopeCacheCapabilities every_cache_mode(PaddingRule padding) {
  RopeCacheCapabilities caps;
  caps.layouts = {CacheLayout::nhd, CacheLayout::hnd, CacheLayout::mla};
  caps.storages = {CacheStorage::fp32, CacheStorage::bf16, CacheStorage::fp16, CacheStorage::fp8_e4m3,
                   CacheStorage::fp8_e5m2};
  caps.directions = {ScaleDirection::multiply, ScaleDirection::divide};
  caps.padding = padding;
  return caps;
}

std::string RopeCacheCapabilities::why_unsupported(const KvCacheSpec& cache) const {
  if (!contains(layouts, cache.layout)) return fmt::format("no {} cache layout", to_string(cache.layout));
  if (!contains(storages, cache.storage)) return fmt::format("no {} cache storage", to_string(cache.storage));
  if (is_fp8(cache.storage) && !contains(directions, cache.scale_direction)) {
    return fmt::format("no FP8 scale {}d", to_string(cache.scale_direction));
  }
  if (cache.padding != padding) {
    return fmt::format("padding tokens: {}, not {}", to_string(padding), to_string(cache.padding));
  }
  return "";
}

RopeCapabilities RopeCacheImpl::rope_capabilities() const {
  RopeCapabilities caps;
  caps.layouts = {Layout::interleaved, Layout::half_split};
  caps.angle_precisions = {AnglePrecision::fp32};
  caps.scaling_kinds = {ScalingKind::none};
  return caps;
}

void RopeCacheImpl::apply(const RopeCacheCall& call) const {
  validate(call.spec);
  validate_cache(call.cache);
  if (call.spec.head_dim != call.cache.head_dim) {
    throw InvalidInput(fmt::format("fused cache call: the spec's head_dim {} is not the cache's {}", call.spec.head_dim,
                                   call.cache.head_dim));
  }
  if (call.tokens < 0 || call.q_heads <= 0) {
    throw InvalidInput(fmt::format("fused cache call: {} tokens, {} q heads", call.tokens, call.q_heads));
  }
  const bool mla = call.cache.layout == CacheLayout::mla;
  const std::int64_t kv = call.tokens * call.cache.kv_heads;
  expect_size(call.q.size(), call.tokens * call.q_heads * call.spec.head_dim, "q");
  expect_size(call.k.size(), kv * call.cache.head_dim, mla ? "k_pe" : "k");
  expect_size(call.v.size(), kv * (mla ? call.cache.latent_dim : call.cache.head_dim), mla ? "kv_c" : "v");
  expect_size(call.positions.size(), call.tokens * axis_count(call.spec), "positions");
  expect_size(call.slots.size(), call.tokens, "slots");
  const std::int64_t cache_bytes = cache_elements(call.cache) * element_bytes(call.cache.storage);
  expect_size(call.k_cache.size(), cache_bytes, mla ? "the cache (bytes)" : "the k cache (bytes)");
  expect_size(call.v_cache.size(), mla ? 0 : cache_bytes, "the v cache (bytes)");
  validate_slots(call.cache, call.slots);
  if (const std::string why = capabilities().why_unsupported(call.cache); !why.empty()) {
    throw InvalidInput(fmt::format("{} does not run this call: {}", id(), why));
  }
  run(call);
}

}  // namespace ropecheck
