// The fused cases' parts of manifest.json (format ropecheck.vectors/5): the cache a case writes
// (layout, storage, shape, scales and their direction, padding rule) and the tolerance of each
// cache element, from core/tolerance.h's FP8 step and the storages' rounding.
//   ropecheck vectors --out /tmp/golden && python3 -m json.tool /tmp/golden/manifest.json
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

#include "core/kv_cache.h"

namespace ropecheck {

// The cache's shape in elements: nhd [blocks][block_size][kv_heads][head_dim], hnd
// [blocks][kv_heads][block_size][head_dim], mla [blocks][block_size][latent_dim + head_dim].
std::vector<std::int64_t> cache_shape(const KvCacheSpec& cache);

// The .npy descr of the storage's elements: '<f4', '<u2' (bf16 bits), '<f2', '|u1' (FP8 codes).
const char* cache_descr(CacheStorage storage);

// {layout, storage, shape, blocks, block_size, kv_heads, head_dim, latent_dim, k_scale, v_scale,
// scale_granularity (none, per_tensor, per_head), scale_direction, padding, slot_mapping}.
nlohmann::ordered_json cache_json(const KvCacheSpec& cache);

// What the storage's narrowing costs and where it saturates: unit_roundoff u_s (0 fp32, 2^-8
// bf16, 2^-11 fp16, fp8_unit_roundoff for FP8), smallest_normal n_s, saturates_at (FP8's largest
// finite value, null otherwise), scale_rounding (FP8: the scaling's one or two fp32 roundings,
// (1 + 2^-24)^2 - 1), with the formula and its derivation.
nlohmann::ordered_json cache_tolerance_json(const KvCacheSpec& cache);

}  // namespace ropecheck
