// A fused RoPE call that writes the paged KV cache (core/kv_cache.h, issue 56), as inference
// engines ship it: q rotated in place; k rotated and, with v, narrowed into the cache at each
// token's slot; nothing else touched. The float64 truth is oracle_rope_and_cache
// (impls/oracle/oracle_kv_cache.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/kv_cache.h"
#include "core/spec.h"
#include "core/tensor.h"
#include "impls/rope_impl.h"

namespace ropecheck {

struct RopeCacheCall {
  RopeSpec spec;  // the rotation; its head_dim is the cache's (mla: k_pe's)
  KvCacheSpec cache;
  std::span<float> q;  // [tokens][q_heads][head_dim], rotated in place
  std::int64_t q_heads = 0;
  // [tokens][kv_heads][head_dim] each; mla: k is k_pe [tokens][1][head_dim], v the latent kv_c
  // [tokens][1][latent_dim].
  std::span<const float> k, v;
  std::int64_t tokens = 0;
  PositionIds positions;  // as RoPE's (axes per token), a valid one for a padding token too
  std::span<const std::int64_t> slots;  // one per token; below 0: padding
  // cache_elements(cache) * element_bytes(cache.storage) bytes each; mla: v_cache empty.
  std::span<std::byte> k_cache, v_cache;
};

// The call as a failure names it, so that a user can make it again: the spec, the cache (layout,
// storage, blocks, kv heads, FP8 scales and their direction, padding rule), the tokens and the
// first 16 slots.
std::string describe(const RopeCacheCall& call);

// What a fused implementation does: the layouts, storages and scale directions it writes, and its
// padding rule (kv_cache.h).
struct RopeCacheCapabilities {
  std::vector<CacheLayout> layouts;
  std::vector<CacheStorage> storages;
  std::vector<ScaleDirection> directions;
  PaddingRule padding = PaddingRule::skip_token;
  // "" when it runs every call it declares; else why not (a call outside the capabilities).
  std::string why_unsupported(const KvCacheSpec& cache) const;
};

// Every layout, storage and FP8 scale direction, under `padding`: what the built-in fused calls
// (the two passes, the fused kernels, the mutants' base) declare.
RopeCacheCapabilities every_cache_mode(PaddingRule padding);

class RopeCacheImpl {
 public:
  virtual ~RopeCacheImpl() = default;
  virtual std::string_view id() const = 0;
  virtual std::string_view summary() const = 0;
  virtual RopeCacheCapabilities capabilities() const = 0;
  // The RoPE forms its rotation computes (the properties draw the call's spec within them): by
  // default what every fused call does, plain RoPE: both layouts, partial rotary, fp32 angles, no
  // scaling, one axis, the forward pass, on the calling thread. A kernel that does more says so.
  virtual RopeCapabilities rope_capabilities() const;
  // Whether this CPU can run it; `why` says what is missing when it cannot.
  virtual bool available(std::string* why = nullptr) const {
    (void)why;
    return true;
  }

  // Validates the spec, the cache, the shapes, the slots and the buffers' sizes (InvalidInput,
  // saying what), refuses a call outside the capabilities (InvalidInput), then runs it.
  void apply(const RopeCacheCall& call) const;

 protected:
  virtual void run(const RopeCacheCall& call) const = 0;
};

}  // namespace ropecheck
