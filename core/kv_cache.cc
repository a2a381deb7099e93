// The paged KV cache of a fused RoPE call (kv_cache.h): sizes, indices, validation, scales.
#include "core/kv_cache.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>
#include <vector>

#include "core/errors.h"
#include "core/fp8.h"
#include "core/storage.h"

namespace ropecheck {

std::string_view to_string(CacheLayout layout) {
  switch (layout) {
    case CacheLayout::nhd: return "nhd";
    case CacheLayout::hnd: return "hnd";
    case CacheLayout::mla: return "mla";
  }
  return "?";
}

std::string_view to_string(CacheStorage storage) {
  switch (storage) {
    case CacheStorage::fp32: return "fp32";
    case CacheStorage::bf16: return "bf16";
    case CacheStorage::fp16: return "fp16";
    case CacheStorage::fp8_e4m3: return "fp8_e4m3";
    case CacheStorage::fp8_e5m2: return "fp8_e5m2";
  }
  return "?";
}

std::string_view to_string(ScaleDirection direction) {
  return direction == ScaleDirection::multiply ? "multiply" : "divide";
}

std::string_view to_string(PaddingRule rule) {
  return rule == PaddingRule::skip_token ? "skip_token" : "rotate_q_only";
}

bool is_fp8(CacheStorage storage) {
  return storage == CacheStorage::fp8_e4m3 || storage == CacheStorage::fp8_e5m2;
}

Fp8Format fp8_format(CacheStorage storage) {
  return storage == CacheStorage::fp8_e5m2 ? Fp8Format::e5m2 : Fp8Format::e4m3;
}

int element_bytes(CacheStorage storage) {
  switch (storage) {
    case CacheStorage::fp32: return 4;
    case CacheStorage::bf16:
    case CacheStorage::fp16: return 2;
    case CacheStorage::fp8_e4m3:
    case CacheStorage::fp8_e5m2: return 1;
  }
  return 0;
}

std::int64_t row_features(const KvCacheSpec& spec) {
  return spec.layout == CacheLayout::mla ? spec.latent_dim + spec.head_dim : spec.head_dim;
}

std::int64_t cache_slots(const KvCacheSpec& spec) { return spec.blocks * spec.block_size; }

std::int64_t cache_elements(const KvCacheSpec& spec) {
  return cache_slots(spec) * spec.kv_heads * row_features(spec);
}

std::int64_t cache_index(const KvCacheSpec& spec, std::int64_t slot, std::int64_t head, std::int64_t feature) {
  const std::int64_t block = slot / spec.block_size, offset = slot % spec.block_size;
  const std::int64_t features = row_features(spec);
  switch (spec.layout) {
    case CacheLayout::hnd: return ((block * spec.kv_heads + head) * spec.block_size + offset) * features + feature;
    case CacheLayout::nhd:
    case CacheLayout::mla: break;
  }
  return ((block * spec.block_size + offset) * spec.kv_heads + head) * features + feature;
}

namespace {

void validate_scales(const KvCacheSpec& spec, const std::vector<float>& scales, const char* which) {
  if (!is_fp8(spec.storage)) {
    if (!scales.empty()) {
      throw InvalidInput(fmt::format("kv cache: a {} scale is for FP8 storage, not {}", which, to_string(spec.storage)));
    }
    return;
  }
  if (scales.size() != 1 && static_cast<std::int64_t>(scales.size()) != spec.kv_heads) {
    throw InvalidInput(fmt::format("kv cache: {} {} scales; FP8 needs 1 (per tensor) or kv_heads = {} (per head)",
                                   scales.size(), which, spec.kv_heads));
  }
  for (std::size_t i = 0; i < scales.size(); ++i) {
    if (!std::isfinite(scales[i]) || scales[i] <= 0) {
      throw InvalidInput(fmt::format("kv cache: {} scale {} is {}; a scale is finite and positive", which, i, scales[i]));
    }
  }
}

}  // namespace

void validate_cache(const KvCacheSpec& spec) {
  if (spec.blocks <= 0 || spec.block_size <= 0 || spec.kv_heads <= 0 || spec.head_dim <= 0) {
    throw InvalidInput(fmt::format("kv cache: blocks {}, block_size {}, kv_heads {}, head_dim {}: each must be > 0",
                                   spec.blocks, spec.block_size, spec.kv_heads, spec.head_dim));
  }
  if (spec.layout == CacheLayout::mla) {
    if (spec.kv_heads != 1 || spec.latent_dim <= 0) {
      throw InvalidInput(fmt::format("kv cache: mla rows are [latent_dim + head_dim] of one head: kv_heads {} must be 1, "
                                     "latent_dim {} > 0",
                                     spec.kv_heads, spec.latent_dim));
    }
  } else if (spec.latent_dim != 0) {
    throw InvalidInput(fmt::format("kv cache: latent_dim {} is the mla layout's, not {}", spec.latent_dim,
                                   to_string(spec.layout)));
  }
  // Every index must fit in int64 (and a whole cache in memory is the caller's to allocate).
  constexpr std::int64_t kLimit = std::numeric_limits<std::int64_t>::max() / 8;
  const std::int64_t features = row_features(spec);
  if (spec.blocks > kLimit / spec.block_size || cache_slots(spec) > kLimit / spec.kv_heads ||
      cache_slots(spec) * spec.kv_heads > kLimit / features) {
    throw InvalidInput(fmt::format("kv cache: {} blocks of {} slots, {} heads of {} features overflow an index",
                                   spec.blocks, spec.block_size, spec.kv_heads, features));
  }
  validate_scales(spec, spec.k_scale, "k");
  if (spec.layout != CacheLayout::mla) {
    validate_scales(spec, spec.v_scale, "v");
  } else if (!spec.v_scale.empty()) {
    // mla has no v: its latent takes v's place and is quantized with k's scale.
    throw InvalidInput("kv cache: mla has one cache, quantized with k_scale; v_scale must be empty");
  }
}

namespace {

// Whether no two valid slots are equal. A prefill into fresh blocks and a decode step give their
// valid slots in increasing order, where no two can be: one walk, no allocation (the hash map
// below cost 4% of an out-of-cache 8192-token fused call on every call). Other orders: a sorted
// copy.
bool valid_slots_distinct(std::span<const std::int64_t> slots) {
  std::int64_t last = -1;
  bool increasing = true;
  for (const std::int64_t slot : slots) {
    if (slot < 0) continue;
    increasing = increasing && slot > last;
    last = slot;
  }
  if (increasing) return true;
  std::vector<std::int64_t> valid;
  valid.reserve(slots.size());
  for (const std::int64_t slot : slots) {
    if (slot >= 0) valid.push_back(slot);
  }
  std::sort(valid.begin(), valid.end());
  return std::adjacent_find(valid.begin(), valid.end()) == valid.end();
}

}  // namespace

void validate_slots(const KvCacheSpec& spec, std::span<const std::int64_t> slots) {
  for (std::size_t t = 0; t < slots.size(); ++t) {
    if (slots[t] >= cache_slots(spec)) {
      throw InvalidInput(fmt::format("kv cache: token {}'s slot {} is past the cache's {} slots ({} blocks of {})", t,
                                     slots[t], cache_slots(spec), spec.blocks, spec.block_size));
    }
  }
  if (valid_slots_distinct(slots)) return;
  // A repeat: the first token that repeats a slot, and the token that wrote it first.
  std::unordered_map<std::int64_t, std::size_t> first_token;
  for (std::size_t t = 0; t < slots.size(); ++t) {
    const std::int64_t slot = slots[t];
    if (slot < 0) continue;  // padding
    const auto [seen, inserted] = first_token.emplace(slot, t);
    if (!inserted) {
      throw InvalidInput(fmt::format("kv cache: tokens {} and {} both write slot {}", seen->second, t, slot));
    }
  }
}

void write_cache_element(CacheStorage storage, std::span<std::byte> cache, std::int64_t index, float stored) {
  std::byte* at = cache.data() + index * element_bytes(storage);
  switch (storage) {
    case CacheStorage::fp32: std::memcpy(at, &stored, 4); return;
    case CacheStorage::bf16: {
      const std::uint16_t bits = bf16_from_float(stored);
      std::memcpy(at, &bits, 2);
      return;
    }
    case CacheStorage::fp16: {
      const Fp16 half = fp16_from_float(stored);
      std::memcpy(at, &half.bits, 2);
      return;
    }
    case CacheStorage::fp8_e4m3: *at = std::byte{fp8_from_float(stored, Fp8Format::e4m3)}; return;
    case CacheStorage::fp8_e5m2: *at = std::byte{fp8_from_float(stored, Fp8Format::e5m2)}; return;
  }
}

float read_cache_element(CacheStorage storage, std::span<const std::byte> cache, std::int64_t index) {
  const std::byte* at = cache.data() + index * element_bytes(storage);
  switch (storage) {
    case CacheStorage::fp32: {
      float value;
      std::memcpy(&value, at, 4);
      return value;
    }
    case CacheStorage::bf16: {
      std::uint16_t bits;
      std::memcpy(&bits, at, 2);
      return float_from_bf16(bits);
    }
    case CacheStorage::fp16: {
      Fp16 half;
      std::memcpy(&half.bits, at, 2);
      return float_from_fp16(half);
    }
    case CacheStorage::fp8_e4m3: return float_from_fp8(std::to_integer<std::uint8_t>(*at), Fp8Format::e4m3);
    case CacheStorage::fp8_e5m2: return float_from_fp8(std::to_integer<std::uint8_t>(*at), Fp8Format::e5m2);
  }
  return 0;
}

double cache_scale(const KvCacheSpec& spec, bool of_k, std::int64_t head) {
  const std::vector<float>& scales = of_k || spec.layout == CacheLayout::mla ? spec.k_scale : spec.v_scale;
  if (scales.empty()) return 1.0;
  return scales.size() == 1 ? scales[0] : scales[static_cast<std::size_t>(head)];
}

double to_stored_domain(double x, double scale, ScaleDirection direction) {
  return direction == ScaleDirection::multiply ? x * scale : x / scale;
}

double from_stored_domain(double stored, double scale, ScaleDirection direction) {
  return direction == ScaleDirection::multiply ? stored / scale : stored * scale;
}

}  // namespace ropecheck
