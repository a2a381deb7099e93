// A port's buffer after one call form golden case (kind rope_form) judged as the manifest says:
// every element of q's and k's rows within its bound (a rotated pair's element: the RoPE bound of
// the normalized pair plus what the QK-norm adds; a feature past rotary_dim: the norm's bound, or
// bit for bit without a norm), every other element of the buffer (v, nope parts, the latent,
// gaps) bit for bit. A failure reads as the call that failed: rope_form_call_text names the
// views, strides, offsets, eps, weight convention, precision and angle source, and the first
// wrong element is named as (token, head, feature) of q or k, or as the region it hit.
//   ropecheck check --vectors /tmp/golden --outputs OUT --kind rope_form
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

// What the judge reads of a case, each checked against the manifest's call by the caller.
struct RopeFormCaseData {
  std::vector<std::int64_t> positions;
  std::vector<double> theta;
  std::vector<std::byte> buffer;  // before the call, in the storage
  // Per view, [tokens][heads][head_dim]: after the call, and before the rotation (the normalized
  // rows; the input's without a norm). k's empty without k.
  std::vector<double> q_expected, k_expected, q_normalized, k_normalized;
};

struct RopeFormVerdict {
  WorstError worst;         // absolute errors; infinite for a changed untouched element
  std::string first_wrong;  // q's rows, then k's, then the untouched elements in buffer order
};

// The angles a case is held to: the port's for angles from the spec; fp64 for the cache form,
// whose cos and sin are each rounded once (inside the rotation's rounding term).
AnglePrecision form_angles(const ManifestCase& c, AnglePrecision port_angles);

// The absolute bound on feature f of one view row whose normalized values are `normalized`
// (head_dim of them), rotated at `position`; 0 for a feature past rotary_dim without a norm,
// which must pass through bit for bit.
double form_element_bound(const ManifestCase& c, AnglePrecision angles, std::int64_t position,
                          std::span<const double> theta, std::span<const double> normalized, int f);

RopeFormVerdict judge_rope_form(const ManifestCase& c, const RopeFormCaseData& data, std::span<const std::byte> out,
                                AnglePrecision angles);

// "storage bf16, 4096 elements; q heads 4 at offset 0, ...; qk_norm eps=1e-06 weight=plain
// precision=fp32; spec head_dim=128 ...; tokens 4, positions [0, 1, 4095, 40959]"
std::string rope_form_call_text(const ManifestCase& c, std::span<const std::int64_t> positions);

}  // namespace ropecheck
