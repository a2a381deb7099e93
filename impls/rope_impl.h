// The interface every RoPE implementation satisfies, and its capability record.
//
// apply() rotates q and k in place: for token t at position m = positions[t], every head's
// rotary pairs are rotated by m * theta_i (see spec.h for pairs and theta_i); a backward spec
// (spec.pass) rotates the gradients in q and k by the transpose. A multi-axis spec
// (position_axes.h) gives each token axis_count(spec) positions, positions[t * axes + a], and
// pair i the position of its axis. q and k may have
// different head counts (GQA). apply() validates everything first and throws InvalidInput on bad
// input, so implementations only see well-formed problems; NaN and Inf in the data are not bad
// input: they propagate through the rotation.
#pragma once

#include <iterator>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "core/spec.h"
#include "core/storage.h"
#include "core/tensor.h"

namespace ropecheck {

struct RopeCapabilities {
  std::vector<Layout> layouts;                   // layouts it computes correctly
  std::vector<AnglePrecision> angle_precisions;  // angle formations it implements
  bool partial_rotary = true;                    // rotary_dim < head_dim
  std::string isa = "scalar";                    // instruction set it needs
  bool available = true;                         // this CPU can run it
  std::string unavailable_reason;                // why not, when !available
  // What it stores q and k in. A bf16 or fp16 implementation also takes fp32 tensors (the
  // properties' way in): they are rounded to its storage, rotated, and widened back, so its
  // output holds storage values exactly.
  StorageType storage = StorageType::fp32;
  // Largest head_dim it handles: the spec generators stay at or below it (a plugin declares one).
  int max_head_dim = kMaxHeadDim;
  // The frequency scaling kinds (scaling.h) it implements, none included: every kind for the
  // built-ins; what a plugin declares (ABI 1: none only).
  std::vector<ScalingKind> scaling_kinds{std::begin(kAllScalingKinds), std::end(kAllScalingKinds)};
  // The position axes (position_axes.h) it implements: one axis only unless it says more (the
  // oracle, the kernels and the HF form do every mode; a plugin declares them, ABI 3).
  std::vector<AxisMode> axis_modes{AxisMode::none};
  // The passes (spec.h) it computes: the forward only unless it says more (every built-in does
  // both; a plugin with a backward entry, ABI 4; a Python function with a backward or autograd).
  std::vector<Pass> passes{Pass::forward};
  // Largest |position| it handles (the position generators stay within it; a plugin declares one).
  std::int64_t max_position = kMaxAbsPosition;
  // Runs in another process (a plugin's worker): its work is not this thread's CPU time, so the
  // bench times it on the wall clock, and its guard bytes are checked there (plugins/host/).
  bool out_of_process = false;
  // Most threads one call may use (apply's `threads`): 1 for an implementation that runs on the
  // calling thread only; the fast kernels split a call's tokens (kMaxCallThreads); an ABI 2
  // plugin takes what --plugin-threads allows it.
  int max_threads = 1;

  bool supports(const RopeSpec& spec) const;
  bool implements(ScalingKind kind) const;  // kind is in scaling_kinds
  bool implements(AxisMode mode) const;     // mode is in axis_modes
  bool implements(Pass pass) const;         // pass is in passes
  std::string why_unsupported(const RopeSpec& spec) const;  // "" when supported
};

class RopeImpl {
 public:
  virtual ~RopeImpl() = default;

  // `<algorithm>/<isa>` or `mutant/<the_bug>`: the same string in --impl, test names, reports.
  virtual std::string_view id() const = 0;
  virtual std::string_view summary() const = 0;  // one line: which RoPE form, where it comes from
  virtual RopeCapabilities capabilities() const = 0;

  // Validates spec, shapes, sizes and positions, refuses a spec outside the capabilities, then
  // rotates q and k in place. Throws InvalidInput on any bad input.
  void apply(const RopeSpec& spec, HeadTensor q, HeadTensor k, PositionIds positions) const;
  // The same on `threads` threads, 1 to capabilities().max_threads (InvalidInput otherwise): where
  // real kernels switch paths (the work split, the last and shorter chunk), so the properties
  // call with every count.
  void apply(const RopeSpec& spec, HeadTensor q, HeadTensor k, PositionIds positions,
             int threads) const;
  // The single-tensor form (a query or key alone).
  void apply(const RopeSpec& spec, HeadTensor x, PositionIds positions) const;
  // bf16 (fp16) in and out, fp32 arithmetic, for implementations whose storage is bf16 (fp16);
  // InvalidInput for the others, and on any bad input as above.
  void apply_bf16(const RopeSpec& spec, Bf16HeadTensor q, Bf16HeadTensor k,
                  PositionIds positions) const;
  void apply_fp16(const RopeSpec& spec, Fp16HeadTensor q, Fp16HeadTensor k,
                  PositionIds positions) const;

 protected:
  // Called with validated, supported input only: rotates q and k in one pass, so that cos/sin
  // can be formed once per token. The single-tensor apply() passes a k with no heads.
  virtual void rotate_qk(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                         PositionIds positions) const = 0;
  // rotate_qk on `threads` threads (2 to max_threads; 1 calls rotate_qk). By default the tokens
  // are split into `threads` contiguous chunks (token_chunk()), each rotated by rotate_qk on a
  // thread of its own, the first on the calling thread; a plugin passes the count on instead.
  virtual void rotate_qk_threads(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                                 PositionIds positions, int threads) const;
  // The same on bf16 storage; called only when capabilities().storage is bf16.
  virtual void rotate_qk_bf16(const RopeSpec& spec, Bf16HeadTensor q, Bf16HeadTensor k,
                              PositionIds positions) const;
  // The same on fp16 storage; called only when capabilities().storage is fp16.
  virtual void rotate_qk_fp16(const RopeSpec& spec, Fp16HeadTensor q, Fp16HeadTensor k,
                              PositionIds positions) const;
  // rotate_qk for an implementation storing bf16 or fp16: fp32 q and k (the properties' way in)
  // rounded to `storage`, rotated by rotate_qk_bf16 / rotate_qk_fp16, widened back (exact).
  void rotate_qk_through_storage(StorageType storage, const RopeSpec& spec, HeadTensor q,
                                 HeadTensor k, PositionIds positions) const;

 private:
  // Validation shared by apply_bf16 and apply_fp16.
  template <typename Element>
  void check_stored(StorageType storage, const RopeSpec& spec, const HeadTensorOf<Element>& q,
                    const HeadTensorOf<Element>& k, PositionIds positions) const;
  // capabilities(), asked once: apply() checks every call against them, and building the record
  // (its vectors, cpuid and ROPECHECK_ISA) took a fifth of a decode call's 0.2 us. They are
  // fixed for the object's life: cpuid, ROPECHECK_ISA as the process started, a plugin's load.
  const RopeCapabilities& checked_capabilities() const;
  mutable std::once_flag capabilities_once_;
  mutable RopeCapabilities capabilities_;
};

// Most threads a fast kernel's call may use: a property draws every count up to the verify run's
// --threads, which may oversubscribe the CPUs (a split's arithmetic does not depend on them).
inline constexpr int kMaxCallThreads = 64;

// Thread j's share of `tokens` split over `threads` (ggml's: ceil(tokens / threads) each, the
// last one shorter, none past the end): [begin, end), empty when j's share starts past the end.
struct TokenChunk {
  std::int64_t begin = 0, end = 0;
};
TokenChunk token_chunk(std::int64_t tokens, int threads, int j);

// Throws InvalidInput unless x is a well-formed [tokens][heads][spec.head_dim] tensor with
// axis_count(spec) positions per token, every position within +-kMaxAbsPosition. `name` names x
// in the message.
void validate_tensor(const RopeSpec& spec, const HeadTensor& x, PositionIds positions,
                     std::string_view name);
void validate_tensor(const RopeSpec& spec, const Bf16HeadTensor& x, PositionIds positions,
                     std::string_view name);
void validate_tensor(const RopeSpec& spec, const Fp16HeadTensor& x, PositionIds positions,
                     std::string_view name);

}  // namespace ropecheck
