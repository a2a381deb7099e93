// RoPE in the engines' own call forms, with QK-norm fused before it (core/rope_form.h, issue 52):
// q and k as strided views into one buffer (k optional), angles from the spec or from a cos/sin
// cache indexed by position, and optionally each head RMS-normalized first. The rows of the views
// are rewritten in place; nothing else in the buffer is touched. The float64 truth is
// oracle_rope_form (impls/oracle/oracle_rope_form.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/rope_form.h"
#include "core/spec.h"
#include "core/storage.h"
#include "core/tensor.h"
#include "impls/rope_impl.h"

namespace ropecheck {

struct RopeFormCall {
  RopeSpec spec;  // head_dim: the width of a view's row (MLA: the rope part's)
  StorageType storage = StorageType::fp32;  // of every element of the buffer
  // q, k and whatever lies around them (v, nope parts, gaps): element_count(storage) elements,
  // fp32 values or bf16/fp16 bit patterns (core/storage.h).
  std::span<std::byte> buffer;
  std::int64_t tokens = 0;
  HeadView q, k;  // k.heads 0: no k
  PositionIds positions;  // one per token; the cache form: each in [0, cache_rows)
  AngleSource angles = AngleSource::spec;
  // The cache form: [cache_rows][rotary_dim] (build_cos_sin_cache); else empty.
  std::span<const float> cos_sin_cache;
  std::int64_t cache_rows = 0;
  // QK-norm before the rotation when has_norm: weights of head_dim entries each (k's unused and
  // may be empty without k).
  bool has_norm = false;
  QkNorm norm;
  std::span<const float> q_weight, k_weight;
  int threads = 1;  // 1 to the implementation's rope_capabilities().max_threads

  std::int64_t elements() const;  // of the buffer, in its storage
};

// The call as a failure names it, so that a user can make it again: the spec, the storage, the
// angle source (and the cache's rows), the norm, the views, the tokens and the first positions.
std::string describe(const RopeFormCall& call);

// What a form implementation takes.
struct RopeFormCapabilities {
  std::vector<StorageType> storages{StorageType::fp32};
  std::vector<AngleSource> angle_sources{AngleSource::spec};
  bool strided = true;     // views other than flat ones (flat: head stride head_dim, token stride heads x it)
  bool k_optional = true;  // a call without k
  bool plain_calls = true; // calls without a norm (the call forms alone)
  // The weight conventions of its QK-norm; empty: no QK-norm.
  std::vector<NormWeight> norm_weights;
  NormPrecision norm_precision = NormPrecision::fp32;  // the one it computes
  // "" when it runs the call; else why not.
  std::string why_unsupported(const RopeFormCall& call) const;
  bool normalizes() const { return !norm_weights.empty(); }
};

class RopeFormImpl {
 public:
  virtual ~RopeFormImpl() = default;
  virtual std::string_view id() const = 0;
  virtual std::string_view summary() const = 0;
  virtual RopeFormCapabilities capabilities() const = 0;
  // The RoPE forms its rotation computes: by default both layouts, partial rotary, fp32 angles,
  // every scaling, one axis, the forward pass, on the calling thread. A kernel says otherwise.
  virtual RopeCapabilities rope_capabilities() const;
  virtual bool available(std::string* why = nullptr) const {
    (void)why;
    return true;
  }

  // Validates the spec, the views, the buffer, the positions, the cache and the norm
  // (InvalidInput, saying what), refuses a call outside the capabilities (InvalidInput), then
  // runs it.
  void apply(const RopeFormCall& call) const;

 protected:
  virtual void run(const RopeFormCall& call) const = 0;

 private:
  const RopeFormCapabilities& checked_capabilities() const;
  mutable std::once_flag capabilities_once_;
  mutable RopeFormCapabilities capabilities_;
};

}  // namespace ropecheck
