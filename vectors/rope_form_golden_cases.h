// The golden cases of RoPE in the engines' call forms, QK-norm fused before it (issue 52,
// core/rope_form.h): q and k as strided views into one buffer (a packed qkv, MLA's rope parts),
// angles from the spec or from a cos/sin cache, each head RMS-normalized first where the model
// does (Qwen3, Gemma 3, GLM-4.5). One call each, as an engine makes it. Changing a case changes
// the vectors everyone compares against: add cases, do not edit them.
//   ropecheck vectors --out /tmp/golden && ls /tmp/golden/qk_norm_qwen3_d128_plain_fp32_packed_qkv
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/rope_form.h"
#include "core/spec.h"
#include "core/storage.h"

namespace ropecheck {

// A part of the buffer no view covers, named so that a failure touching it says what it hit: v,
// a nope part, MLA's latent, k's rows in a call without k. Its rows are a HeadView of `width`
// features per head. Elements in no view and no region are gaps.
struct FormRegion {
  std::string name;
  HeadView rows;
  std::int64_t width = 0;
};

// One call's operands other than the values: what the manifest's "call" states.
struct FormCall {
  StorageType storage = StorageType::fp32;
  std::int64_t elements = 0;  // of the buffer
  HeadView q, k;              // k.heads 0: no k
  AngleSource angles = AngleSource::spec;
  std::int64_t cache_rows = 0;  // the cos/sin cache form
  bool has_norm = false;
  QkNorm norm;
  std::vector<FormRegion> regions;
};

struct GoldenRopeFormCase {
  std::string name;         // also the case's directory name
  std::string description;  // the engine call it stands for
  RopeSpec spec;            // angle_precision fp64; head_dim: a view's row (MLA: the rope part)
  FormCall call;
  std::vector<std::int64_t> positions;  // one per token; the cache form: in [0, cache_rows)
  // The buffer is golden_inputs() of the storage times this: small activations make eps a few
  // percent of the mean square, so that a port dropping it fails.
  float input_scale = 1.0f;
};

std::span<const GoldenRopeFormCase> golden_rope_form_cases();

}  // namespace ropecheck
