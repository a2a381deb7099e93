// manifest.json read back (manifest_reader.h): the inverse of manifest.cc and vectors.cc's case
// entries. Every JSON error becomes InvalidInput naming the manifest and the case, so that
// `ropecheck check` exits 2 with a message instead of an uncaught exception.
#include "vectors/manifest_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <sstream>

#include "core/errors.h"
#include "vectors/manifest.h"
#include "vectors/rope_form_manifest.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// 1 to 6 for the formats this reads, 0 for any other.
int format_version(const std::string& format) {
  const char* formats[] = {kVectorsFormatV1, kVectorsFormatV2, kVectorsFormatV3,
                           kVectorsFormatV4, kVectorsFormatV5, kVectorsFormat};
  for (int v = 0; v < 6; ++v) {
    if (format == formats[v]) return v + 1;
  }
  return 0;
}

double finite_non_negative(const Json& j, const char* key) {
  const double x = j.at(key).get<double>();
  if (!std::isfinite(x) || x < 0) {
    throw InvalidInput(fmt::format("tolerance field '{}' must be finite and >= 0, got {}", key, x));
  }
  return x;
}

// An optional parameter of a spec: absent or null is none.
std::optional<double> optional_number(const Json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return j[key].get<double>();
}

SinusoidalTolerance sinusoidal_tolerance_from_json(const Json& t) {
  const Json& units = t.at("bound_units");
  return {finite_non_negative(units, "fp64_angles"),
          finite_non_negative(units, "fp32_div_term_rounding")};
}

CacheTolerance cache_tolerance_from_json(const Json& t) {
  CacheTolerance tolerance;
  tolerance.unit_roundoff = finite_non_negative(t, "unit_roundoff");
  tolerance.smallest_normal = finite_non_negative(t, "smallest_normal");
  tolerance.scale_rounding = finite_non_negative(t, "scale_rounding");
  if (!t.at("saturates_at").is_null()) tolerance.saturates_at = finite_non_negative(t, "saturates_at");
  if (tolerance.unit_roundoff >= 1 || tolerance.scale_rounding >= 1 || tolerance.saturates_at <= 0) {
    throw InvalidInput("cache tolerance: unit_roundoff and scale_rounding must be < 1, saturates_at > 0");
  }
  return tolerance;
}

// One of an enum's values by its to_string name.
template <typename Enum>
Enum parse_named(const std::string& text, std::initializer_list<Enum> values, const char* what) {
  std::string names;
  for (const Enum value : values) {
    if (to_string(value) == text) return value;
    names += (names.empty() ? "" : ", ") + std::string(to_string(value));
  }
  throw InvalidInput(fmt::format("unknown cache {} '{}' ({})", what, text, names));
}

ManifestCase case_from_json(const Json& c, const fs::path& dir, const std::string& format) {
  ManifestCase out;
  out.name = c.at("name").get<std::string>();
  out.kind = c.at("kind").get<std::string>();
  out.dtype = parse_storage(c.at("dtype").get<std::string>());
  out.tokens = c.at("tokens").get<std::int64_t>();
  for (const auto& [key, file] : c.at("files").items()) {
    out.files[key] = {dir / file.at("path").get<std::string>(), file.at("descr").get<std::string>(),
                      file.at("shape").get<std::vector<std::int64_t>>()};
  }
  if (out.kind == "rope") {
    out.rope_spec = rope_spec_from_json(c.at("spec"));
    out.q_heads = c.at("q_heads").get<std::int64_t>();
    out.kv_heads = c.at("kv_heads").get<std::int64_t>();
    out.rope_tolerance = rope_tolerance_from_json(c.at("tolerance"));
  } else if (out.kind == "rope_cache") {
    if (format_version(format) < 5) {
      throw InvalidInput(fmt::format("kind rope_cache came with format {}, not {}", kVectorsFormatV5, format));
    }
    out.rope_spec = rope_spec_from_json(c.at("spec"));
    out.q_heads = c.at("q_heads").get<std::int64_t>();
    out.kv_heads = c.at("kv_heads").get<std::int64_t>();
    out.cache = cache_from_json(c.at("cache"));
    if (out.cache.kv_heads != out.kv_heads || out.cache.head_dim != out.rope_spec.head_dim) {
      throw InvalidInput(fmt::format("the cache's kv_heads {} and head_dim {} are not the case's {} and {}",
                                     out.cache.kv_heads, out.cache.head_dim, out.kv_heads, out.rope_spec.head_dim));
    }
    out.rope_tolerance = rope_tolerance_from_json(c.at("tolerance").at("q"));
    out.cache_tolerance = cache_tolerance_from_json(c.at("tolerance").at("cache"));
  } else if (out.kind == "rope_form") {
    if (format_version(format) < 6) {
      throw InvalidInput(fmt::format("kind rope_form came with format {}, not {}", kVectorsFormat, format));
    }
    out.rope_spec = rope_spec_from_json(c.at("spec"));
    if (axis_count(out.rope_spec) != 1 || out.rope_spec.pass != Pass::forward) {
      throw InvalidInput("kind rope_form: one position axis and the forward pass only");
    }
    out.form = form_call_from_json(c.at("call"), out.tokens, out.rope_spec);
    if (out.form.storage != out.dtype) {
      throw InvalidInput(fmt::format("call.storage {} is not the case's dtype {}", to_string(out.form.storage),
                                     to_string(out.dtype)));
    }
    out.q_heads = out.form.q.heads;
    out.kv_heads = out.form.k.heads;
    out.rope_tolerance = rope_tolerance_from_json(c.at("tolerance").at("rotation"));
    out.form_norm = form_norm_tolerance_from_json(c.at("tolerance").at("qk_norm"));
  } else if (out.kind == "sinusoidal") {
    out.sinusoidal_spec = {c.at("spec").at("d_model").get<int>(), c.at("spec").at("base").get<double>()};
    validate(out.sinusoidal_spec);
    out.sinusoidal_tolerance = sinusoidal_tolerance_from_json(c.at("tolerance"));
  } else {
    throw InvalidInput(fmt::format("unknown kind '{}' (rope, sinusoidal, rope_cache, rope_form)", out.kind));
  }
  return out;
}

Json parse_file(const fs::path& path) {
  std::ifstream file(path);
  if (!file) {
    throw InvalidInput(fmt::format("cannot read {} (write the vectors with `ropecheck vectors --out DIR`)",
                                   path.string()));
  }
  std::stringstream text;
  text << file.rdbuf();
  try {
    return Json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    throw InvalidInput(fmt::format("{}: not JSON: {}", path.string(), e.what()));
  }
}

}  // namespace

RopeTolerance rope_tolerance_from_json(const Json& t) {
  const Json& units = t.at("rotation_bound_units");
  const Json& per_radian = units.at("fp32_angles_per_radian");
  RopeTolerance tolerance;
  tolerance.rounding = finite_non_negative(units, "rounding");
  tolerance.storage = finite_non_negative(units, "storage");
  // Version 1 has none of these: an unscaled case, a = 1.
  if (units.contains("attention_factor")) {
    tolerance.attention_factor = finite_non_negative(units, "attention_factor");
  }
  if (units.contains("fp32_attention_scaling")) {
    tolerance.fp32_attention_scaling = finite_non_negative(units, "fp32_attention_scaling");
  }
  tolerance.per_abs_ln_theta = finite_non_negative(per_radian, "per_abs_ln_theta");
  tolerance.constant = finite_non_negative(per_radian, "constant");
  if (per_radian.contains("blend")) tolerance.blend = finite_non_negative(per_radian, "blend");
  if (units.contains("fp32_recurrence_angles_per_radian")) {
    const Json& recurrence = units.at("fp32_recurrence_angles_per_radian");
    tolerance.recurrence_known = true;
    tolerance.recurrence_log_ratio = finite_non_negative(recurrence, "log_ratio");
    tolerance.recurrence_per_pair_ulps = finite_non_negative(recurrence, "per_pair_ulps");
    tolerance.recurrence_constant_ulps = finite_non_negative(recurrence, "constant_ulps");
  }
  tolerance.pair_norm_floor = finite_non_negative(t, "pair_norm_floor");
  if (tolerance.attention_factor <= 0) throw InvalidInput("tolerance attention_factor must be > 0");
  return tolerance;
}

double RopeTolerance::bound_units(AnglePrecision angles, std::int64_t position, double theta,
                                  int pair) const {
  double units = rounding + storage;
  const double radians = std::abs(static_cast<double>(position) * theta);
  if (angles == AnglePrecision::fp32) {
    units += fp32_attention_scaling +
             (per_abs_ln_theta * std::abs(std::log(theta)) + constant + blend) * radians;
  } else if (angles == AnglePrecision::fp32_recurrence) {
    if (!recurrence_known) {
      throw InvalidInput("this manifest states no bound for fp32_recurrence angles (written "
                         "before them): rewrite the vectors with `ropecheck vectors --out DIR`");
    }
    const double k = pair * (recurrence_log_ratio + recurrence_per_pair_ulps) + recurrence_constant_ulps;
    units += fp32_attention_scaling + (k / 2 / (1 - k * 0x1p-24) + blend) * radians;
  }
  return attention_factor * units;
}

double RopeTolerance::unit_pair_norm(double pair_norm) const {
  if (pair_norm == 0) return 0;
  return std::max(pair_norm, pair_norm_floor);
}

double SinusoidalTolerance::bound_units(AnglePrecision angles, std::int64_t pos, int i,
                                        const SinusoidalSpec& spec) const {
  if (angles == AnglePrecision::fp64) return fp64_angles;
  const double a = 2.0 * i * std::log(spec.base) / spec.d_model;
  return fp32_div_term_rounding + std::abs(static_cast<double>(pos)) * std::exp(-a) * (a + 1.5);
}

KvCacheSpec cache_from_json(const Json& j) {
  try {
    KvCacheSpec cache;
    cache.layout = parse_named(j.at("layout").get<std::string>(), {CacheLayout::nhd, CacheLayout::hnd, CacheLayout::mla},
                               "layout");
    cache.storage = parse_named(j.at("storage").get<std::string>(),
                                {CacheStorage::fp32, CacheStorage::bf16, CacheStorage::fp16, CacheStorage::fp8_e4m3,
                                 CacheStorage::fp8_e5m2},
                                "storage");
    cache.blocks = j.at("blocks").get<std::int64_t>();
    cache.block_size = j.at("block_size").get<std::int64_t>();
    cache.kv_heads = j.at("kv_heads").get<std::int64_t>();
    cache.head_dim = j.at("head_dim").get<std::int64_t>();
    cache.latent_dim = j.at("latent_dim").get<std::int64_t>();
    cache.k_scale = j.at("k_scale").get<std::vector<float>>();
    cache.v_scale = j.at("v_scale").get<std::vector<float>>();
    cache.scale_direction = parse_named(j.at("scale_direction").get<std::string>(),
                                        {ScaleDirection::multiply, ScaleDirection::divide}, "scale_direction");
    cache.padding = parse_named(j.at("padding").get<std::string>(),
                                {PaddingRule::skip_token, PaddingRule::rotate_q_only}, "padding");
    validate_cache(cache);
    return cache;
  } catch (const nlohmann::json::exception& e) {
    throw InvalidInput(fmt::format("cache: {}", e.what()));
  }
}

const ManifestFile& ManifestCase::file(const std::string& key) const {
  const auto found = files.find(key);
  if (found == files.end()) {
    throw InvalidInput(fmt::format("manifest: case {} lists no file '{}'", name, key));
  }
  return found->second;
}

StorageType parse_storage(const std::string& text) {
  for (const StorageType s : {StorageType::fp32, StorageType::bf16, StorageType::fp16}) {
    if (to_string(s) == text) return s;
  }
  throw InvalidInput(fmt::format("unknown dtype '{}' (fp32, bf16, fp16)", text));
}

RopeScaling scaling_from_json(const Json& j) {
  try {
    RopeScaling s;
    s.kind = parse_scaling_kind(j.at("kind").get<std::string>());
    const auto original = [&] {
      s.original_max_position = j.at("original_max_position").get<std::int64_t>();
    };
    switch (s.kind) {
      case ScalingKind::none:
        break;
      case ScalingKind::linear:
      case ScalingKind::ntk:
        s.factor = j.at("factor").get<double>();
        break;
      case ScalingKind::dynamic_ntk:
        s.factor = j.at("factor").get<double>();
        original();
        s.sequence_length = j.at("sequence_length").get<std::int64_t>();
        break;
      case ScalingKind::yarn:
        s.factor = j.at("factor").get<double>();
        original();
        s.beta_fast = j.at("beta_fast").get<double>();
        s.beta_slow = j.at("beta_slow").get<double>();
        s.truncate = j.at("truncate").get<bool>();
        // Optional (DeepSeek's; manifests before them have none): absent or null is not set.
        s.mscale = optional_number(j, "mscale");
        s.mscale_all_dim = optional_number(j, "mscale_all_dim");
        break;
      case ScalingKind::llama3:
        s.factor = j.at("factor").get<double>();
        original();
        s.low_freq_factor = j.at("low_freq_factor").get<double>();
        s.high_freq_factor = j.at("high_freq_factor").get<double>();
        break;
      case ScalingKind::longrope:
        s.factor = j.at("factor").get<double>();
        original();
        s.sequence_length = j.at("sequence_length").get<std::int64_t>();
        s.short_factor = j.at("short_factor").get<std::vector<double>>();
        s.long_factor = j.at("long_factor").get<std::vector<double>>();
        break;
    }
    s.attention_factor = optional_number(j, "attention_factor");
    return s;
  } catch (const nlohmann::json::exception& e) {
    throw InvalidInput(fmt::format("scaling: {}", e.what()));
  }
}

PositionAxes axes_from_json(const Json& j) {
  try {
    PositionAxes axes;
    axes.mode = parse_axis_mode(j.at("mode").get<std::string>());
    if (axes.mode == AxisMode::none) return axes;
    const auto sections = j.at("sections").get<std::vector<int>>();
    if (sections.size() != static_cast<std::size_t>(axis_count(axes))) {
      throw InvalidInput(fmt::format("axes: {} sections for mode {}, which has {} axes", sections.size(),
                                     to_string(axes.mode), axis_count(axes)));
    }
    std::copy(sections.begin(), sections.end(), axes.sections.begin());
    return axes;
  } catch (const nlohmann::json::exception& e) {
    throw InvalidInput(fmt::format("axes: {}", e.what()));
  }
}

RopeSpec rope_spec_from_json(const Json& j) {
  try {
    RopeSpec spec{j.at("head_dim").get<int>(),
                  j.at("rotary_dim").get<int>(),
                  j.at("base").get<double>(),
                  parse_layout(j.at("layout").get<std::string>()),
                  parse_angle_precision(j.at("angle_precision").get<std::string>()),
                  {}, {}};
    // Version 1 manifests have no scaling: none.
    if (j.contains("scaling")) spec.scaling = scaling_from_json(j["scaling"]);
    // Versions 1 and 2 have no axes: one position per token.
    if (j.contains("axes")) spec.axes = axes_from_json(j["axes"]);
    // Versions 1 to 3 have no pass: the forward.
    if (j.contains("pass")) spec.pass = parse_pass(j.at("pass").get<std::string>());
    validate(spec);
    return spec;
  } catch (const nlohmann::json::exception& e) {
    throw InvalidInput(fmt::format("spec: {}", e.what()));
  }
}

Manifest read_manifest(const fs::path& vectors_dir) {
  std::error_code error;
  if (!fs::is_directory(vectors_dir, error)) {
    throw InvalidInput(fmt::format("--vectors {}: not a directory (write one with `ropecheck vectors "
                                   "--out DIR`)", vectors_dir.string()));
  }
  Manifest manifest;
  manifest.path = vectors_dir / "manifest.json";
  const Json json = parse_file(manifest.path);
  try {
    manifest.format = json.at("format").get<std::string>();
    if (format_version(manifest.format) == 0) {
      throw InvalidInput(fmt::format("format '{}' is not one this ropecheck reads ({}, {}, {}, {}, {}, {})",
                                     manifest.format, kVectorsFormatV1, kVectorsFormatV2, kVectorsFormatV3,
                                     kVectorsFormatV4, kVectorsFormatV5, kVectorsFormat));
    }
    for (const Json& c : json.at("cases")) {
      const std::string name = c.contains("name") && c["name"].is_string() ? c["name"].get<std::string>()
                                                                          : "(unnamed)";
      try {
        manifest.cases.push_back(case_from_json(c, vectors_dir, manifest.format));
      } catch (const nlohmann::json::exception& e) {
        throw InvalidInput(fmt::format("case {}: {}", name, e.what()));
      } catch (const InvalidInput& e) {
        throw InvalidInput(fmt::format("case {}: {}", name, e.what()));
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw InvalidInput(fmt::format("{}: {}", manifest.path.string(), e.what()));
  } catch (const InvalidInput& e) {
    throw InvalidInput(fmt::format("{}: {}", manifest.path.string(), e.what()));
  }
  return manifest;
}

}  // namespace ropecheck
