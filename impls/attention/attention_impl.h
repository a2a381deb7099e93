// Attention as the property suite sees it: an implementation (attention_naive/scalar,
// attention_blas/<softmax level>, mutants) that takes q, k, v, optionally rotates q and k with
// RoPE at the given positions (by the dispatched fast kernel), then attends. Registered in
// impls/registry.inc like the RoPE ones.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "impls/attention/attention.h"
#include "core/spec.h"
#include "core/storage.h"
#include "core/tensor.h"

namespace ropecheck {

class AttentionImpl {
 public:
  virtual ~AttentionImpl() = default;
  virtual std::string_view id() const = 0;
  virtual std::string_view summary() const = 0;
  // Whether this CPU can run it; `why` says what is missing when it cannot.
  virtual bool available(std::string* why = nullptr) const {
    (void)why;
    return true;
  }
  // What it keeps K and V in: the attention properties derive its bound from it (fp16: K and V
  // rounded to binary16 once, as llama.cpp's F16 KV cache keeps them; docs/tolerance.md).
  virtual StorageType kv_storage() const { return StorageType::fp32; }

  // rope == nullptr: no positional encoding. Otherwise q and k (copies) are rotated first, at
  // `positions` (one per token), with spec.head_dim == shape.head_dim, by the dispatched fast
  // kernel; or, where the implementation fuses RoPE, inside attend_with_rope. `threads`: the
  // team that shares the work (AttentionWork::threads; the reference takes one). Throws
  // InvalidInput.
  void run(const AttentionShape& shape, const RopeSpec* rope, PositionIds positions,
           std::span<const float> q, std::span<const float> k, std::span<const float> v,
           std::span<float> out, int threads = 1) const;

 protected:
  virtual void attend(const AttentionShape& shape, std::span<const float> q,
                      std::span<const float> k, std::span<const float> v, std::span<float> out,
                      int threads) const = 0;
  // Whether the rotated q and k reach attend(); a mutant forgets (seed 001).
  virtual bool uses_rotated_qk() const { return true; }
  // An implementation that rotates q and k itself, as it packs them, returns true and gets them
  // unrotated in attend_with_rope (rope != nullptr only).
  virtual bool fuses_rope() const { return false; }
  virtual void attend_with_rope(const AttentionShape& shape, const RopeSpec& rope,
                                PositionIds positions, std::span<const float> q,
                                std::span<const float> k, std::span<const float> v,
                                std::span<float> out, int threads) const;
};

}  // namespace ropecheck
