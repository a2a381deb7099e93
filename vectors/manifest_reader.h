// Reading a golden-vector manifest back (`ropecheck check`, and tests): each case's spec with its
// frequency scaling and position axes, dtype, shapes, files and tolerance, exactly as manifest.h
// wrote them. Reads format versions 1 to 6; a field an older version lacks takes its value on an
// unscaled, one-axis, forward case, and a rope_cache case in a manifest before version 5 (a
// rope_form case before version 6) is refused.
//   ropecheck vectors --out /tmp/golden && ropecheck check --vectors /tmp/golden --outputs OUT
#pragma once

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/kv_cache.h"
#include "core/tolerance.h"
#include "core/spec.h"
#include "core/storage.h"
#include "impls/sinusoidal/absolute_encoding.h"
#include "vectors/rope_form_golden_cases.h"
#include "vectors/rope_form_tolerance.h"

namespace ropecheck {

// A RoPE case's tolerance as the manifest states it (rope_tolerance_json in manifest.h).
struct RopeTolerance {
  double rounding = 2.0;
  double storage = 0.0;
  double attention_factor = 1.0;
  double fp32_attention_scaling = 0.0;
  double per_abs_ln_theta = 0.5;  // fp32_angles_per_radian
  double constant = 3.5;
  double blend = 0.0;
  double pair_norm_floor = 0.0;
  // fp32_recurrence_angles_per_radian (absent from manifests before it: recurrence_known false)
  bool recurrence_known = false;
  double recurrence_log_ratio = 0.0;
  double recurrence_per_pair_ulps = 3.0;
  double recurrence_constant_ulps = 4.0;

  // The manifest's formula for one element of pair `pair` rotated by position * theta, in units
  // of eps32 * unit_pair_norm: attention_factor * (rounding + storage + [fp32 angles]
  // (fp32_attention_scaling + (per_abs_ln_theta |ln theta| + constant + blend) |position theta|)),
  // with [fp32 recurrence] (k / 2 / (1 - k 2^-24) + blend) |position theta| in place of the
  // fp32 angles' per-radian term, k = pair (log_ratio + per_pair_ulps) + constant_ulps. Throws
  // InvalidInput for fp32_recurrence on a manifest that predates it.
  double bound_units(AnglePrecision angles, std::int64_t position, double theta, int pair) const;
  // max(|p|, pair_norm_floor); a zero pair stays 0: it must rotate to exact zeros.
  double unit_pair_norm(double pair_norm) const;
};

// A sinusoidal case's tolerance (sinusoidal_tolerance_json), in units of eps32.
struct SinusoidalTolerance {
  double fp64_angles = 0.0;
  double fp32_div_term_rounding = 0.0;

  // fp64: fp64_angles; fp32: fp32_div_term_rounding + |pos| w_i (a_i + 1.5), a_i = 2i ln(base) /
  // d_model, w_i = exp(-a_i): pair i of PE(pos).
  double bound_units(AnglePrecision angles, std::int64_t pos, int i,
                     const SinusoidalSpec& spec) const;
};

// A rope_cache case's cache tolerance (rope_cache_manifest.h's cache_tolerance_json), on one
// written element: its stored-domain truth y, the port's stored value s.

struct ManifestFile {
  std::filesystem::path path;  // the vectors directory joined with the manifest's relative path
  std::string descr;           // "<f4", "<f2", "<u2" (bf16 bits), "<f8", "<i8"
  std::vector<std::int64_t> shape;
};

struct ManifestCase {
  std::string name;
  std::string kind;  // "rope", "sinusoidal", "rope_cache" (the fused call, format 5) or "rope_form"
                     // (the call forms with QK-norm, format 6)
  StorageType dtype = StorageType::fp32;
  RopeSpec rope_spec;               // kind "rope"
  SinusoidalSpec sinusoidal_spec;   // kind "sinusoidal"
  std::int64_t tokens = 0;       // positions holds tokens * axis_count(rope_spec) entries
  std::int64_t q_heads = 0;
  std::int64_t kv_heads = 0;
  std::map<std::string, ManifestFile> files;  // by key: "q", "q_expected", "positions", ...
  RopeTolerance rope_tolerance;     // kind "rope"; "rope_cache": q's (and the rotation of k);
                                    // "rope_form": the rotation's
  FormCall form;                    // kind "rope_form": the call (views, angles, norm, regions)
  FormNormTolerance form_norm;      // kind "rope_form": what the QK-norm adds
  SinusoidalTolerance sinusoidal_tolerance;
  KvCacheSpec cache;                // kind "rope_cache"
  CacheTolerance cache_tolerance;   // kind "rope_cache"

  // Throws InvalidInput naming the case and key when the manifest lists no such file.
  const ManifestFile& file(const std::string& key) const;
};

struct Manifest {
  std::filesystem::path path;  // DIR/manifest.json
  std::string format;          // kVectorsFormat or an older one (kVectorsFormatV1 to V5)
  std::vector<ManifestCase> cases;
};

// Reads DIR/manifest.json. Throws InvalidInput naming the file (and the case) when DIR or the
// manifest is missing, not JSON, of another format, or lacks a field or has one of the wrong type.
Manifest read_manifest(const std::filesystem::path& vectors_dir);

// The inverse of manifest.h's rope_tolerance_json; throws InvalidInput for a negative or
// non-finite field.
RopeTolerance rope_tolerance_from_json(const nlohmann::ordered_json& tolerance);

// The inverses of manifest.h's rope_spec_json and scaling_json; validate the result (throw
// InvalidInput for a bad value or a missing field).
RopeSpec rope_spec_from_json(const nlohmann::ordered_json& spec);
RopeScaling scaling_from_json(const nlohmann::ordered_json& scaling);
PositionAxes axes_from_json(const nlohmann::ordered_json& axes);
// The inverse of rope_cache_manifest.h's cache_json, validated (validate_cache).
KvCacheSpec cache_from_json(const nlohmann::ordered_json& cache);

StorageType parse_storage(const std::string& text);  // "fp32", "bf16", "fp16"; throws InvalidInput

}  // namespace ropecheck
