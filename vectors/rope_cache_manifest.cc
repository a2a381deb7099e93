// The fused cases' cache and cache tolerance in manifest.json (rope_cache_manifest.h). The
// numbers come from core/tolerance.h and core/fp8.h, so the manifest cannot drift from the bounds
// ropecheck itself checks.
#include "vectors/rope_cache_manifest.h"

#include <cmath>

#include "core/fp8.h"
#include "core/tolerance.h"
#include "vectors/npy.h"

namespace ropecheck {

using Json = nlohmann::ordered_json;

namespace {

std::string_view granularity(const KvCacheSpec& cache) {
  if (cache.k_scale.empty()) return "none";
  return cache.k_scale.size() == 1 && cache.v_scale.size() <= 1 ? "per_tensor" : "per_head";
}

}  // namespace

std::vector<std::int64_t> cache_shape(const KvCacheSpec& cache) {
  switch (cache.layout) {
    case CacheLayout::nhd: return {cache.blocks, cache.block_size, cache.kv_heads, cache.head_dim};
    case CacheLayout::hnd: return {cache.blocks, cache.kv_heads, cache.block_size, cache.head_dim};
    case CacheLayout::mla: break;
  }
  return {cache.blocks, cache.block_size, cache.latent_dim + cache.head_dim};
}

const char* cache_descr(CacheStorage storage) {
  switch (storage) {
    case CacheStorage::fp32: return kNpyFloat32;
    case CacheStorage::bf16: return kNpyUint16;
    case CacheStorage::fp16: return kNpyFloat16;
    case CacheStorage::fp8_e4m3:
    case CacheStorage::fp8_e5m2: break;
  }
  return kNpyUint8;
}

Json cache_json(const KvCacheSpec& cache) {
  return {{"layout", std::string(to_string(cache.layout))},
          {"storage", std::string(to_string(cache.storage))},
          {"shape", cache_shape(cache)},
          {"blocks", cache.blocks},
          {"block_size", cache.block_size},
          {"kv_heads", cache.kv_heads},
          {"head_dim", cache.head_dim},
          {"latent_dim", cache.latent_dim},
          {"k_scale", cache.k_scale},
          {"v_scale", cache.v_scale},
          {"scale_granularity", std::string(granularity(cache))},
          {"scale_direction", std::string(to_string(cache.scale_direction))},
          {"padding", std::string(to_string(cache.padding))},
          {"slot_mapping", "block = slot / block_size, offset = slot % block_size; a slot below 0 is "
                           "padding and writes nothing"}};
}

Json cache_tolerance_json(const KvCacheSpec& cache) {
  // The numbers are core/tolerance.h's (cache_tolerance), the bound the fused call's properties
  // hold an element to; the lines say where each comes from.
  const CacheTolerance t = cache_tolerance(cache.storage);
  const Json saturates_at = std::isfinite(t.saturates_at) ? Json(t.saturates_at) : Json(nullptr);
  std::string storage_line;
  switch (cache.storage) {
    case CacheStorage::fp32:
      storage_line = "fp32 storage: the fp32 result is stored as it is: unit_roundoff 0.";
      break;
    case CacheStorage::bf16:
      storage_line = "bf16 storage: one rounding to nearest even, 8 significant bits: |n(y) - y| <= 2^-8 |y| "
                     "(bf16 has fp32's exponent range: smallest normal 2^-126).";
      break;
    case CacheStorage::fp16:
      storage_line = "fp16 storage: one rounding to nearest even, 11 significant bits: |n(y) - y| <= 2^-11 "
                     "max(|y|, 2^-14) (half the subnormal spacing 2^-24 under 2^-14).";
      break;
    case CacheStorage::fp8_e4m3:
    case CacheStorage::fp8_e5m2:
      storage_line = "FP8 storage (core/fp8.h): the stored-domain value is narrowed once, to nearest even, "
                     "saturating: |n(y) - y| <= u_8 max(|y|, n_8) up to the largest finite value (tolerance.h's "
                     "fp8_rounding_error); what rounds past it is stored as +-largest, exactly. n is "
                     "1-Lipschitz after the clamp, so |n(y~) - clamp(y)| <= pre + u_8 (max(|clamp(y)|, n_8) + pre).";
      break;
  }
  Json derivation = Json::array({
      "The call rotates k in fp32 as a RoPE port does: |k~ - k| <= rotation (the q tolerance's "
      "rotation_bound_units for its pair, times eps32 * unit_pair_norm of k's input pair); v and the MLA latent "
      "are copied, rotation 0.",
      "FP8 scales it into the stored domain in fp32, y~ = k~ * scale or k~ / scale (one rounding; a port that "
      "forms 1 / scale first and multiplies, two): y~ = sigma k~ (1 + d), |d| <= scale_rounding = (1 + 2^-24)^2 - 1, "
      "sigma = scale or 1/scale, so |y~ - y| <= sigma rotation (1 + scale_rounding) + scale_rounding |y| = pre. "
      "Not FP8: sigma 1, exact, scale_rounding 0.",
      storage_line,
  });
  if (!saturates_at.is_null()) {
    derivation.push_back(
        "Saturation: where |y| >= saturates_at the stored value must be exactly sign(y) * saturates_at: y~ "
        "differs from y by pre, far less than half the step under the largest value (16 for e4m3, 2048 for "
        "e5m2), so it rounds to the largest; a NaN or an Inf there is the bug eager torch.to(float8) had.");
  }
  return {
      {"units", "absolute, in the stored domain: y = x * scale (multiply) or x / scale (divide), scale 1 "
                "where not FP8; dequantized x = y / scale or y * scale gives the same ratio"},
      {"error", "err = |s - clamp(y)| per written element, s the port's stored value (its bytes decoded), y "
                "from k_rows_expected.npy / v_rows_expected.npy, clamp to +-saturates_at (none where null)"},
      {"unit_roundoff", t.unit_roundoff},
      {"smallest_normal", t.smallest_normal},
      {"saturates_at", saturates_at},
      {"scale_rounding", t.scale_rounding},
      {"formula", "pre = sigma * rotation * (1 + scale_rounding) + scale_rounding * |y|, rotation = q's bound "
                  "in units times eps32 * max(hypot(k_a, k_b), pair_norm_floor) for a rotated k element, 0 for "
                  "v and the latent; bound = pre + unit_roundoff * (max(|clamp(y)|, smallest_normal) + pre); "
                  "|y| >= saturates_at: exactly sign(y) * saturates_at; an element no valid slot addresses: "
                  "bit for bit the initial cache's"},
      {"derivation", derivation},
      {"source", "core/tolerance.h (CacheTolerance, fp8_unit_roundoff, fp8_rounding_error), core/fp8.h, core/kv_cache.h"},
  };
}

}  // namespace ropecheck
