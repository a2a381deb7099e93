// A port's outputs of one fused golden case (kind rope_cache) judged as the manifest says: q
// within the RoPE bound (a padding token's left bit for bit under skip_token), every written cache
// element within its cache tolerance after narrowing (exactly +-largest where FP8 saturates), and
// every element no valid slot addresses bit for bit the initial cache's. A failure reads as the
// call that failed: rope_cache_call_text names the slots, block size, layout, storage and scales,
// and the first wrong element is named as (token, head, feature) -> (block, offset).
//   ropecheck check --vectors /tmp/golden --outputs OUT --kind rope_cache
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/spec.h"
#include "vectors/judge.h"
#include "vectors/manifest_reader.h"

namespace ropecheck {

// What the judge reads of a case, each checked against the manifest's shapes by the caller.
struct RopeCacheCaseData {
  std::vector<std::int64_t> positions, slots;
  std::vector<double> theta;
  std::vector<float> q, k;                  // inputs (k: the rotated part, k_pe for mla)
  std::vector<double> q_expected;           // q after the call, float64
  std::vector<double> k_rows, v_rows;       // [tokens][kv_heads][features], stored domain; v empty for mla
  std::vector<std::byte> k_initial, v_initial;  // the caches before the call, in the storage
};

struct RopeCacheOutputs {
  std::vector<float> q;
  std::vector<std::byte> k_cache, v_cache;  // v_cache empty for mla
};

struct RopeCacheVerdict {
  WorstError worst;          // over q and the caches; infinite for a changed unaddressed element
  std::string first_wrong;   // the first element over its bound (q, then each token's rows, then
                             // the unaddressed elements in cache order); empty when none is
};

RopeCacheVerdict judge_rope_cache(const ManifestCase& c, const RopeCacheCaseData& data, const RopeCacheOutputs& out,
                                  AnglePrecision angles);

// "layout nhd, storage fp8_e4m3, block_size 16 (3 blocks), kv_heads 2, k_scale [0.00712] v_scale
// [0.0057] per tensor, divide (stored = x / scale), padding skip_token, slots [5, -1, 20, 21, 3]"
std::string rope_cache_call_text(const ManifestCase& c, std::span<const std::int64_t> slots);

}  // namespace ropecheck
