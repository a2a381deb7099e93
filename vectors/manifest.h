// The parts of the golden vectors' manifest.json ("ropecheck.vectors/6") that do not depend on
// the files written: the generator, the conventions, each case's spec (frequency scaling
// included) and its recommended tolerance with the derivation, taken from core/tolerance.h
// (numbers and text together), and where `ropecheck check` looks for a port's outputs.
//   ropecheck vectors --out /tmp/golden && python3 -m json.tool /tmp/golden/manifest.json
//
// Version 2 adds to version 1, whose fields all keep their names and meanings: spec.scaling,
// scaling_effective, hf_transformers, conventions and outputs per RoPE case; the tolerance fields
// attention_factor, fp32_attention_scaling and fp32_angles_per_radian.blend (1, 0 and 0 on the
// unscaled cases, where version 1's formula gives the same bound); the top-level conventions
// "scaling", "outputs" and "format".
//
// Version 3 adds to version 2: spec.axes per RoPE case (multi-axis RoPE: the mode and its
// sections), positions.npy as int64 [tokens, axes] on a multi-axis case, the top-level
// convention "axes". A reader of version 2 would take a multi-axis case's positions for one axis
// per token and judge it wrongly: the version is bumped so that it refuses the file instead.
//
// Version 4 adds spec.pass and the backward cases. Version 5 adds the fused call's cases (kind
// "rope_cache": rope_cache_manifest.h), with their cache, slots and cache files, and the top-level
// convention "rope_cache"; the cases before them are unchanged. Version 6 adds the call forms'
// cases (kind "rope_form": rope_form_manifest.h), each a whole buffer with q's and k's views, the
// QK-norm and the angle source, and the top-level convention "rope_form"; the cases before them
// are unchanged.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "core/spec.h"
#include "core/storage.h"

namespace ropecheck {

inline constexpr const char* kVectorsFormat = "ropecheck.vectors/6";
inline constexpr const char* kVectorsFormatV5 = "ropecheck.vectors/5";  // still read by `check`
inline constexpr const char* kVectorsFormatV4 = "ropecheck.vectors/4";  // still read by `check`
inline constexpr const char* kVectorsFormatV3 = "ropecheck.vectors/3";  // still read by `check`
inline constexpr const char* kVectorsFormatV2 = "ropecheck.vectors/2";  // still read by `check`
inline constexpr const char* kVectorsFormatV1 = "ropecheck.vectors/1";  // still read by `check`

// {format, generator, conventions}: the top of manifest.json, before "cases".
nlohmann::ordered_json vectors_manifest_head();

// A RoPE spec as the manifest states it: head_dim, rotary_dim, base, layout, angle_precision,
// scaling (scaling_json), axes (axes_json) and pass (forward, backward). manifest_reader.h's rope_spec_from_json reads it
// back.
nlohmann::ordered_json rope_spec_json(const RopeSpec& spec);

// {"kind", then the parameters that kind reads (scaling.h's names; yarn's mscale and
// mscale_all_dim only where set), "attention_factor": the override or null}; {"kind": "none"}
// when unscaled. A reader that predates mscale judges such a case alike: the expected values and
// the tolerance's attention factor are in the files.
nlohmann::ordered_json scaling_json(const RopeScaling& scaling);

// {"mode": "none"}, or {"mode": "mrope" | "imrope" | "vision", "sections": one entry per axis}.
nlohmann::ordered_json axes_json(const PositionAxes& axes);

// What the parameters lead to, computed by core/frequency.h, for a porter comparing step by step:
// the attention factor, the (dynamic) NTK base, YaRN's correction range, which LongRoPE list.
nlohmann::ordered_json scaling_effective_json(const RopeSpec& spec);

// The tolerance a RoPE port storing `dtype` should meet against the float64 expected values of
// `spec`: rotation_bound_units (rounding, storage, attention_factor, fp32_attention_scaling,
// fp64_angles total, fp32_angles_per_radian), the formula and the derivation, in units of
// eps32 * max(|(x_a, x_b)|, pair_norm_floor): the floor is the storage's smallest normal over
// the attention factor (tolerance.h's unit_pair_norm), binding for fp16 pairs under 2^-14 / a.
nlohmann::ordered_json rope_tolerance_json(const RopeSpec& spec, StorageType dtype);

// The same for an fp32 sinusoidal table, in units of eps32 (absolute).
nlohmann::ordered_json sinusoidal_tolerance_json();

// `ropecheck check` reads a port's result for tensor "q", "k" (RoPE), "pe" (sinusoidal) or "q",
// "k_cache", "v_cache" (rope_cache) or "buffer" (rope_form) of a case from
// OUTPUTS/<case>/<tensor>_out.npy, with the dtype and shape of the case's own file (q.npy, k.npy,
// pe_expected_fp32.npy, <k|v>_cache_initial.npy, buffer.npy).
std::string port_output_path(std::string_view case_name, std::string_view tensor);

}  // namespace ropecheck
