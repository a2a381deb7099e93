// The HF transformers mapping and the convention notes of the scaled golden cases
// (hf_conventions.h). The notes describe transformers' rope code by its function names
// (modeling_rope_utils.py: _compute_*_parameters, dynamic_rope_update) rather than by release
// numbers; tests/vectors/recompute_scaled_vectors.py recomputes every scaled case from the
// hf_transformers fields and the positions alone, with transformers' current formulas.
#include "vectors/hf_conventions.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/frequency.h"

namespace ropecheck {
namespace {

using Json = nlohmann::ordered_json;

Json note(std::string topic, std::string this_case, std::string elsewhere) {
  return {{"topic", std::move(topic)}, {"this_case", std::move(this_case)},
          {"elsewhere", std::move(elsewhere)}};
}

// factor * L as the integer max_position_embeddings a config holds (HF derives the YaRN and
// LongRoPE factor from it).
std::int64_t stretched_length(const RopeScaling& s) {
  return std::llround(s.factor * static_cast<double>(s.original_max_position));
}

bool exact_in_fp32(const std::vector<double>& values) {
  return std::all_of(values.begin(), values.end(),
                     [](double x) { return static_cast<double>(static_cast<float>(x)) == x; });
}

std::int64_t current_length(std::span<const std::int64_t> positions) {
  return positions.empty() ? 0 : *std::max_element(positions.begin(), positions.end()) + 1;
}

Json linear_notes() {
  return Json::array({note(
      "where the factor is applied",
      "theta_i / factor (transformers' _compute_linear_scaling_rope_parameters: inv_freq /= factor)",
      "earlier per-model LlamaLinearScalingRotaryEmbedding classes and MLX divide or scale the "
      "positions instead (t / factor): the same angles in exact arithmetic, a different fp32 "
      "rounding, inside the fp32-angle term of the bound")});
}

Json ntk_notes(const RopeSpec& spec) {
  return Json::array({note(
      "base",
      fmt::format("base * factor^(d/(d-2)) = {:.17g} with d = rotary_dim = {}, whatever the "
                  "sequence length",
                  ntk_base(spec), spec.rotary_dim),
      "configs usually state the stretched base as rope_theta itself (hf_transformers.rope_theta); "
      "dynamic NTK (rope_type \"dynamic\") is the length-dependent form")});
}

Json dynamic_ntk_notes(const RopeSpec& spec, std::int64_t length) {
  const RopeScaling& s = spec.scaling;
  const bool above = s.sequence_length > s.original_max_position;
  return Json::array({
      note("sequence length L'",
           fmt::format("L' = sequence_length = {} = max(positions) + 1 ({}): the table of one "
                       "forward call on a fresh model, where every transformers version agrees",
                       s.sequence_length, length),
           "transformers' dynamic_rope_update recomputes the table when max(position_ids) + 1 exceeds "
           "the largest length seen so far and resets it to the unscaled table when a call is "
           "shorter than max_position_embeddings; earlier per-model "
           "LlamaDynamicNTKScalingRotaryEmbedding classes recomputed from each call's "
           "max(position_ids) + 1 and kept the last scaled table for shorter calls, or (older still) "
           "from the kv-cache length, growing only; vLLM builds one table for L' = factor * L"),
      note("the switch",
           fmt::format("scaled only when L' > L: here L' = {} {} L = {}, {}", s.sequence_length,
                       above ? ">" : "<=", s.original_max_position,
                       above ? fmt::format("base {:.17g}", ntk_base(spec)) : "the unscaled table"),
           "every transformers version: seq_len = max(seq_len, max_position_embeddings), the same"),
      note("original length L",
           fmt::format("L = original_max_position = {}", s.original_max_position),
           "transformers reads config.max_position_embeddings here, not "
           "rope_scaling.original_max_position_embeddings: hf_transformers.max_position_embeddings "
           "is L"),
  });
}

Json yarn_notes(const RopeSpec& spec) {
  const RopeScaling& s = spec.scaling;
  const auto range = yarn_correction_range(spec);
  const std::string attention =
      s.attention_factor ? fmt::format("the explicit attention_factor {}", *s.attention_factor)
      : uses_mscale_ratio(s)
          ? fmt::format("get_mscale({0}, {1}) / get_mscale({0}, {2}) = (0.1 * {1} ln({0}) + 1) / (0.1 * {2} "
                        "ln({0}) + 1) = {3:.17g} (mscale / mscale_all_dim)",
                        s.factor, *s.mscale, *s.mscale_all_dim, attention_factor(spec))
          : fmt::format("0.1 ln({}) + 1 = {:.17g}", s.factor, attention_factor(spec));
  return Json::array({
      note("attention factor",
           fmt::format("cos and sin multiplied by a = {}: expected = a R x", attention),
           "transformers (cos * attention_scaling), vLLM and llama.cpp (mscale) multiply cos/sin; "
           "with mscale and mscale_all_dim in the config (both non-zero) transformers uses "
           "get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim), and so does vLLM's "
           "DeepseekScalingRotaryEmbedding; with one alone transformers keeps 0.1 ln(factor) + 1 while "
           "vLLM still takes the ratio (its defaults mscale 1, mscale_all_dim 0, get_mscale(s, 0) = 1); "
           "DeepSeek's reference code puts "
           "get_mscale(factor, mscale_all_dim)^2 into the softmax scale; a port that applies a as "
           "an attention temperature instead compares its rotation with expected / a"),
      note("factor",
           fmt::format("factor = {} for the interpolated frequencies and the default attention factor",
                       s.factor),
           fmt::format("newer transformers replace rope_scaling.factor by max_position_embeddings / "
                       "original_max_position_embeddings when the latter is in rope_scaling; "
                       "hf_transformers.max_position_embeddings = {} = factor * L gives the same factor",
                       stretched_length(s))),
      note("original length L (the correction range)",
           fmt::format("L = original_max_position = {}: correction range [{}, {}]",
                       s.original_max_position, range.low, range.high),
           "earlier transformers (_compute_yarn_parameters without original_max_position_embeddings) "
           "took L = config.max_position_embeddings, which moves the range; later ones read "
           "rope_scaling.original_max_position_embeddings when present"),
      note("sequence length", "none: the table is static",
           "the YaRN paper's Dynamic YaRN scales the factor with the current length; transformers, "
           "vLLM and llama.cpp do not"),
      note("truncate",
           s.truncate ? "correction dims floored and ceiled (truncate true, the default)"
                      : "raw correction dims as the ramp's ends (truncate false)",
           "transformers' truncate option (gpt-oss sets false) is newer; earlier versions and "
           "llama.cpp always floor and ceil"),
  });
}

Json llama3_notes(const RopeSpec& spec) {
  const RopeScaling& s = spec.scaling;
  return Json::array({
      note("bands",
           "wavelength 2 pi / theta_i below L / high_freq_factor kept, above L / low_freq_factor "
           "divided by factor, between blended with smooth = (L / wavelength - low_freq_factor) / "
           "(high_freq_factor - low_freq_factor)",
           "transformers' _compute_llama3_parameters and Meta's apply_scaling agree; no difference "
           "between versions known"),
      note("original length L",
           fmt::format("L = rope_scaling.original_max_position_embeddings = {}", s.original_max_position),
           "not max_position_embeddings (131072 for LLaMA-3.1): a port reading that gets other bands"),
  });
}

Json longrope_notes(const RopeSpec& spec, std::int64_t length) {
  const RopeScaling& s = spec.scaling;
  const bool long_side = s.sequence_length > s.original_max_position;
  const std::int64_t last = length - 1;
  const bool vllm_long = last > s.original_max_position;
  return Json::array({
      note("short or long factors",
           fmt::format("long when sequence_length > L; sequence_length = {} = max(positions) + 1 "
                       "({}), L = {}: {} factors",
                       s.sequence_length, length, s.original_max_position,
                       long_side ? "long" : "short"),
           fmt::format("transformers (longrope_frequency_update) and Phi-3's own modeling code: long "
                       "when max(position_ids) + 1 > original_max_position_embeddings, per call; "
                       "earlier transformers (_compute_longrope_parameters alone) used long whenever "
                       "max_position_embeddings > original_max_position_embeddings, whatever the "
                       "length; vLLM: long for a batch with a position > "
                       "original_max_position_embeddings, which picks {} here",
                       vllm_long ? "long" : "short")),
      note("attention factor",
           fmt::format("a = sqrt(1 + ln(factor) / ln(L)) = {:.17g}, factor = "
                       "max_position_embeddings / original_max_position_embeddings = {}, on cos/sin "
                       "with short and long factors alike",
                       attention_factor(spec), s.factor),
           "transformers derives factor from those two config fields, over rope_scaling.factor; "
           "some configs give per-side short_mscale / long_mscale, which vLLM applies"),
      note("factor lists in fp32",
           exact_in_fp32(s.short_factor) && exact_in_fp32(s.long_factor)
               ? "every entry is exact in fp32, so the list is the same number in any precision"
               : "the entries as doubles; some are not exact in fp32",
           "transformers builds ext_factors as a float32 tensor: an entry not exact in fp32 is "
           "rounded before it divides"),
  });
}

}  // namespace

Json hf_transformers_json(const RopeSpec& spec) {
  const RopeScaling& s = spec.scaling;
  if (s.kind == ScalingKind::none) return nullptr;
  Json j = {{"rope_theta", spec.base}, {"head_dim", spec.head_dim}};
  if (spec.rotary_dim != spec.head_dim) {
    j["partial_rotary_factor"] = static_cast<double>(spec.rotary_dim) / spec.head_dim;
  }
  Json scaling = Json::object();
  switch (s.kind) {
    case ScalingKind::none:
      break;
    case ScalingKind::linear:
      scaling = {{"rope_type", "linear"}, {"factor", s.factor}};
      break;
    case ScalingKind::ntk:
      // No rope_scaling: a static NTK-aware model is a larger base.
      j["rope_theta"] = ntk_base(spec);
      scaling = nullptr;
      break;
    case ScalingKind::dynamic_ntk:
      j["max_position_embeddings"] = s.original_max_position;
      scaling = {{"rope_type", "dynamic"}, {"factor", s.factor}};
      break;
    case ScalingKind::yarn:
      j["max_position_embeddings"] = stretched_length(s);
      scaling = {{"rope_type", "yarn"},
                 {"factor", s.factor},
                 {"original_max_position_embeddings", s.original_max_position},
                 {"beta_fast", s.beta_fast},
                 {"beta_slow", s.beta_slow}};
      if (!s.truncate) scaling["truncate"] = false;
      if (s.mscale) scaling["mscale"] = *s.mscale;
      if (s.mscale_all_dim) scaling["mscale_all_dim"] = *s.mscale_all_dim;
      break;
    case ScalingKind::llama3:
      scaling = {{"rope_type", "llama3"},
                 {"factor", s.factor},
                 {"low_freq_factor", s.low_freq_factor},
                 {"high_freq_factor", s.high_freq_factor},
                 {"original_max_position_embeddings", s.original_max_position}};
      break;
    case ScalingKind::longrope:
      j["max_position_embeddings"] = stretched_length(s);
      j["original_max_position_embeddings"] = s.original_max_position;
      scaling = {{"rope_type", "longrope"}, {"short_factor", s.short_factor},
                 {"long_factor", s.long_factor}};
      break;
  }
  if (s.attention_factor && scaling.is_object()) scaling["attention_factor"] = *s.attention_factor;
  j["rope_scaling"] = scaling;
  return j;
}

Json scaling_conventions_json(const RopeSpec& spec, std::span<const std::int64_t> positions) {
  const std::int64_t length = current_length(positions);
  switch (spec.scaling.kind) {
    case ScalingKind::none: return Json::array();
    case ScalingKind::linear: return linear_notes();
    case ScalingKind::ntk: return ntk_notes(spec);
    case ScalingKind::dynamic_ntk: return dynamic_ntk_notes(spec, length);
    case ScalingKind::yarn: return yarn_notes(spec);
    case ScalingKind::llama3: return llama3_notes(spec);
    case ScalingKind::longrope: return longrope_notes(spec, length);
  }
  return Json::array();
}

}  // namespace ropecheck
