// What the fused cache call's properties share (properties/rope_cache_properties.cc): one drawn
// call as an engine makes it (the RoPE case, the paged cache, v, the slots, the cache's bytes
// before), the call run through an implementation, and the judges of its two halves against the
// float64 truth (impls/oracle/oracle_kv_cache.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/kv_cache.h"
#include "impls/fused/rope_cache_impl.h"
#include "impls/oracle/oracle_kv_cache.h"
#include "properties/harness/rope_cases.h"
#include "properties/harness/rope_harness.h"

namespace ropecheck {

// What a case is drawn to stress, beside the layout, storage, direction and block size every case
// draws from the implementation's capabilities.
enum class CacheCaseAim {
  any,         // values in the activations' range, about one token in five padding
  padding,     // about half the tokens padding, slots below 0 of every kind
  saturating,  // an FP8 storage, scales that carry many values past the format's largest
  fp8,         // an FP8 storage, per-head scales where there are heads, values within the format
};

struct RopeCacheCase {
  QkCase rope;  // spec, tokens, q (q_heads) and k (k_heads = the cache's kv_heads; mla: k_pe)
  KvCacheSpec cache;
  std::vector<float> v;                // [tokens][kv_heads][head_dim]; mla: kv_c [tokens][1][latent_dim]
  std::vector<std::int64_t> slots;     // one per token, below 0: padding
  std::vector<std::byte> k_cache, v_cache;  // the bytes before the call: a random pattern, NaNs included
};

// Must be called inside a RapidCheck property. Draws from the implementation's capabilities (the
// layouts, storages, directions it writes, the padding rule it declares) and its RoPE forms; the
// engines' block sizes (16, 32, 64, 128); slots that cross block boundaries, share blocks, leave
// gaps, run in any order and include padding. Discards the case where the capabilities offer
// nothing the aim needs (no FP8 storage for `saturating`).
RopeCacheCase pick_rope_cache_case(const RopeCacheImpl& impl, CacheCaseAim aim);

// What the call left: q, and the caches' bytes.
struct RopeCacheOutput {
  std::vector<float> q;
  std::vector<std::byte> k_cache, v_cache;
};

// Runs the case through the implementation on copies of its buffers (an exception thrown by the
// call propagates: the property's case fails with its message).
RopeCacheOutput run_rope_cache_case(const RopeCacheImpl& impl, const RopeCacheCase& c);
// The same call without its padding tokens (a case with the valid tokens only).
RopeCacheCase without_padding(const RopeCacheCase& c);

FusedCacheTruth truth_of(const RopeCacheCase& c);

// "layout nhd, fp8_e4m3, block_size 16 x 3 blocks, kv_heads 2, k scale 0.5 per tensor divided,
// padding skip_token": the call a failure message names.
std::string describe_cache(const KvCacheSpec& cache);
// "token 3 (slot 17: block 1, offset 1)".
std::string describe_token(const RopeCacheCase& c, std::int64_t token);

// q's rotary features against the truth (a skip_token padding token's q as it came), in units of
// eps32 * |pair| against the tolerance model's per-element bound (worst_rotary_error).
WorstElement worst_q_error(const RopeCacheCase& c, const FusedCacheTruth& truth, const std::vector<float>& q);

// One cache element a valid slot addresses, what the call must put there, and how far off it may
// be before narrowing to the storage.
struct WrittenElement {
  std::int64_t token = 0, head = 0, feature = 0;  // feature within k (k_pe) or v (kv_c)
  bool of_k = true;
  std::int64_t index = 0;   // in the cache (mla: the one cache, for both)
  double truth = 0;         // the float64 truth in the stored domain (FusedCacheTruth)
  double scale = 1, factor = 1;  // the element's scale, and what the declared direction multiplies by
  // The bound on |fp32 stored value - truth| (core/tolerance.h, CacheTolerance::pre_narrowing):
  // k's rotation error (tolerance model) times the factor, plus the fp32 scaling's rounding (FP8).
  double before_narrowing = 0;
};
void for_each_written(const RopeCacheCase& c, const FusedCacheTruth& truth,
                      const std::function<void(const WrittenElement&)>& visit);

// "cache: layout ...; slots [...]": the call, as a failure names it.
std::string describe_call(const RopeCacheCase& c);

// Every cache element a valid slot addresses, read back, against the truth in the stored domain:
// |stored - clamp(truth)| within core/tolerance.h's CacheTolerance: the rotation (k; its
// tolerance-model bound times the scale), the scaling in fp32 (FP8 only) and the narrowing to the
// storage, saturating at FP8's largest (the golden vectors' bound too). `dequantized`: the
// same compared in the model's domain (from_stored_domain), the error and bound divided by the
// scale's factor: what a reader of the cache sees. Units: the error over its bound per element.
WorstElement worst_cache_error(const RopeCacheCase& c, const FusedCacheTruth& truth, const RopeCacheOutput& out,
                               bool dequantized);

// The first written FP8 element that is not finite or past the format's largest, or whose fp32
// stored value is certainly past it and is not the largest exactly, with its sign (error 1).
WorstElement first_unsaturated(const RopeCacheCase& c, const FusedCacheTruth& truth, const RopeCacheOutput& out);

// The first cache byte no valid slot addresses that changed (error 1), or none (error 0).
WorstElement first_unaddressed_change(const RopeCacheCase& c, const FusedCacheTruth& truth, const RopeCacheOutput& out);

}  // namespace ropecheck
