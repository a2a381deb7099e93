// The golden cases of the fused call (issue 56): q and k rotated, the rotated k and the v written
// into a paged KV cache at each token's slot (core/kv_cache.h), one call each as an inference
// engine makes it. Changing a case changes the vectors everyone compares against: add cases, do
// not edit them.
//   ropecheck vectors --out /tmp/golden && ls /tmp/golden/nhd_fp8_e4m3_bs16_per_tensor_divide_vllm
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/kv_cache.h"
#include "core/spec.h"
#include "core/storage.h"

namespace ropecheck {

struct GoldenRopeCacheCase {
  std::string name;         // also the case's directory name
  std::string description;  // the engine call it stands for
  RopeSpec spec;            // angle_precision fp64; head_dim is the cache's (mla: k_pe's)
  KvCacheSpec cache;        // layout, storage, blocks, scales, direction, padding rule
  std::int64_t q_heads = 1;
  std::vector<std::int64_t> positions;  // one per token, valid for padding tokens too
  std::vector<std::int64_t> slots;      // one per token; -1 is padding
  // q, k and v are golden_inputs() of this type, times input_scale (so exact in it): the
  // activations' type an engine feeds the call (bf16 for the FP8 caches). The files store them as
  // float32, which the call takes.
  StorageType inputs = StorageType::fp32;
  float input_scale = 1.0f;  // the saturation cases push stored values past FP8's largest
};

std::span<const GoldenRopeCacheCase> golden_rope_cache_cases();

}  // namespace ropecheck
