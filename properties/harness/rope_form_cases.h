// What the call-form properties share (properties/rope_form_properties.cc): one call drawn as the
// engines make them (core/rope_form.h: the buffer's layout, the views into it, the angle source,
// the QK-norm), the call run through an implementation, and the judges of what it left against
// the float64 truth (impls/oracle/oracle_rope_form.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/rope_form.h"
#include "impls/fused/rope_form_impl.h"
#include "impls/oracle/oracle_rope_form.h"
#include "properties/harness/rope_harness.h"

namespace ropecheck {

// How q and k lie in the buffer, as the engines hand them over.
enum class BufferLayout {
  separate,      // q [tokens, q_heads * d], then k [tokens, k_heads * d]: flat tensors of their own
  packed_qkv,    // [tokens, (q_heads + 2 k_heads) * d (+ pad)]: q and k slices of a packed qkv, v after them
  padded_heads,  // q and k each with a head stride past head_dim, different for the two
  mla,           // DeepSeek: q [tokens, heads, nope + d] with q_pe at offset nope; k_pe in [tokens, latent + d]
};

// What a case is drawn to stress, beside the storage, source, layout and shape every case draws.
enum class FormCaseAim {
  any,        // every form the implementation takes, with or without its norm
  norm,       // a QK-norm call (discarded for an implementation without one)
  zero_head,  // a QK-norm call with at least one head of zeros
  partial,    // a QK-norm call with rotary_dim < head_dim
  cache_edge, // the cos/sin cache form with positions at its first and last rows
};

// What an element of the buffer belongs to: a row the call rewrites, or what it must leave.
enum class BufferPart : std::uint8_t { q_row, k_row, v, nope, latent, gap, k_place };

struct RopeFormCase {
  RopeSpec spec;
  StorageType storage = StorageType::fp32;
  BufferLayout layout = BufferLayout::separate;
  std::int64_t tokens = 0, q_heads = 0, k_heads = 0;  // k_heads 0: k absent
  HeadView q, k;
  std::vector<std::byte> buffer;   // the bits before the call
  std::vector<BufferPart> parts;   // per element
  std::vector<std::int64_t> positions;
  AngleSource angles = AngleSource::spec;
  std::int64_t cache_rows = 0;
  std::vector<float> cos_sin_cache;
  bool has_norm = false;
  QkNorm norm;
  std::vector<float> q_weight, k_weight;
  int threads = 1;

  RopeFormCall call(std::span<std::byte> on) const;  // the call, on `on` (a copy of buffer)
  std::int64_t elements() const { return static_cast<std::int64_t>(parts.size()); }
};

// Must be called inside a RapidCheck property. Draws within the implementation's capabilities and
// RoPE forms: strides that are not head_dim, q and k with different head strides, k absent,
// positions at the cache's last row, rotary_dim < head_dim, the models' eps and head dims, heads
// of every magnitude (small ones, where eps decides), and one case in four at the sizes where
// kernels switch paths (many heads times many tokens). Discards the case when the capabilities
// offer nothing the aim needs.
RopeFormCase pick_rope_form_case(const RopeFormImpl& impl, FormCaseAim aim);

// The buffer the call left (an exception thrown by the call propagates: the case fails with it).
std::vector<std::byte> run_rope_form_case(const RopeFormImpl& impl, const RopeFormCase& c);

// A view's rows of a buffer, widened: [tokens][heads][head_dim].
std::vector<float> gather_rows(const RopeFormCase& c, std::span<const std::byte> buffer, const HeadView& view);

// The truth of one view (q or k) of the case.
NormRopeTruth truth_of(const RopeFormCase& c, bool of_q);

// The relative error the call's norm is allowed (core/tolerance.h's qk_norm_relative_error; 0
// without a norm).
double norm_error(const RopeFormCase& c);

// Per element of a view's gathered rows (gather_rows' order): the truth, and the bound on
// |result - truth| in the values' own units (the bounds below times eps32 times their unit); 0 where
// the result must be exact (a zero pair, a zero head, the tail of a call without a norm).
struct RowJudgement {
  std::vector<double> truth, bound;
};
RowJudgement judge_rows(const RopeFormCase& c, bool of_q);

// Every element of the views' rows against the truth: rotary features in units of eps32 times the
// normalized pair's norm against  a delta + rotation bound (1 + delta)  (core/tolerance.h); the
// features past rotary_dim against  delta + the storage's rounding  of the normalized value, or bit
// for bit without a norm. `only_tail`: the features past rotary_dim alone.
WorstElement worst_form_error(const RopeFormCase& c, std::span<const std::byte> out, bool only_tail = false);

// The first element outside the views' rows that changed (error 1, where it is and what it
// belongs to: v, a nope part, the latent, a gap, k's place), or none (error 0).
WorstElement first_outside_change(const RopeFormCase& c, std::span<const std::byte> out);

// "qk_norm ..., packed_qkv: q heads 8 ..., k ...": the call, as a failure names it.
std::string describe_case(const RopeFormCase& c);
std::string_view to_string(BufferLayout layout);
std::string_view to_string(BufferPart part);

}  // namespace ropecheck
