// The base of the fused cache call's mutants (issue 56): a plain, correct fused call (HF's
// rotate_half form rotates q and k, then each valid token's rows are written) with one virtual
// hook per decision a fused kernel makes: which tokens write, where a row goes, how the scale is
// applied, how a value is narrowed, what goes in k's place, what padding does to q. Each mutant
// overrides one hook with a bug seen in the engines' kernels (vLLM, FlashInfer, TensorRT-LLM), so
// its file shows the bug in one place and nothing else differs.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "impls/fused/rope_cache_impl.h"

namespace ropecheck::mutants {

class RopeCacheMutant : public RopeCacheImpl {
 public:
  RopeCacheMutant();
  RopeCacheCapabilities capabilities() const override;  // every layout, storage and direction
  RopeCapabilities rope_capabilities() const override;

 protected:
  // The padding rule it declares (and, but for its bug, keeps).
  virtual PaddingRule declared_padding() const { return PaddingRule::skip_token; }
  // Whether the token with this slot writes its rows.
  virtual bool writes(std::int64_t slot) const { return slot >= 0; }
  // The cache element of (slot, head, feature).
  virtual std::int64_t element(const KvCacheSpec& cache, std::int64_t slot, std::int64_t head,
                               std::int64_t feature) const {
    return cache_index(cache, slot, head, feature);
  }
  // x in the stored domain, in fp32; `of_k`: a k element (else v or kv_c).
  virtual float to_stored(float x, float scale, ScaleDirection direction, bool of_k) const;
  // The stored value narrowed into the cache.
  virtual void narrow(CacheStorage storage, std::span<std::byte> cache, std::int64_t at, float stored) const {
    write_cache_element(storage, cache, at, stored);
  }
  // Whether k's row is written from v as it came (an argument mix-up) instead of the rotated k.
  virtual bool k_from_v() const { return false; }
  // Whether a padding token's q is rotated though the rule is skip_token.
  virtual bool rotates_padding_q() const { return false; }

  void run(const RopeCacheCall& call) const override;

 private:
  std::unique_ptr<RopeImpl> rotation_;
};

}  // namespace ropecheck::mutants
