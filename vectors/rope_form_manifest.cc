// A call form case's "call" in manifest.json and back (rope_form_manifest.h). The reader applies
// core/rope_form.h's own checks, so that a hand-edited manifest cannot send the judge past the
// buffer.
#include "vectors/rope_form_manifest.h"

#include <fmt/format.h>

#include <initializer_list>

#include "core/errors.h"

namespace ropecheck {

using Json = nlohmann::ordered_json;

namespace {

Json view_json(const HeadView& view) {
  return {{"heads", view.heads}, {"offset", view.offset}, {"token_stride", view.token_stride},
          {"head_stride", view.head_stride}};
}

HeadView view_from_json(const Json& j) {
  return {j.at("heads").get<std::int64_t>(), j.at("offset").get<std::int64_t>(),
          j.at("token_stride").get<std::int64_t>(), j.at("head_stride").get<std::int64_t>()};
}

template <typename Enum>
Enum form_enum(const std::string& text, std::initializer_list<Enum> values, const char* what) {
  std::string names;
  for (const Enum value : values) {
    if (to_string(value) == text) return value;
    names += (names.empty() ? "" : ", ") + std::string(to_string(value));
  }
  throw InvalidInput(fmt::format("call: unknown {} '{}' ({})", what, text, names));
}

}  // namespace

Json form_call_json(const FormCall& call, const RopeSpec& spec) {
  Json regions = Json::array();
  for (const FormRegion& r : call.regions) {
    Json j = view_json(r.rows);
    j["name"] = r.name;
    j["width"] = r.width;
    regions.push_back(std::move(j));
  }
  Json cache = nullptr;
  if (call.angles == AngleSource::cos_sin_cache) {
    cache = {{"rows", call.cache_rows},
             {"layout", fmt::format("[rows][rotary_dim = {}] fp32 (cos_sin_cache.npy): row m holds cos(m theta_i) a for "
                                    "i < {}, then sin(m theta_i) a; a token at position m reads row m",
                                    spec.rotary_dim, spec.rotary_dim / 2)}};
  }
  Json norm = nullptr;
  if (call.has_norm) {
    norm = {{"eps", call.norm.eps},
            {"weight", std::string(to_string(call.norm.weight))},
            {"precision", std::string(to_string(call.norm.precision))},
            {"formula", "each head of q (q_weight.npy) and k (k_weight.npy) over all its head_dim features, before "
                        "the rotation: x_hat_f = x_f / sqrt(mean_f(x^2) + eps) * w'_f, w' = w (plain) or 1 + w "
                        "(one_plus); precision fp32: x_hat kept in fp32 into the rotation; storage: x_f r rounded to "
                        "the storage, then the product with w' rounded again"}};
  }
  return {{"storage", std::string(to_string(call.storage))},
          {"buffer_elements", call.elements},
          {"indexing", "element of (token t, head h, feature f) of a view: offset + t * token_stride + h * "
                       "head_stride + f, f < spec.head_dim (a region's: f < width)"},
          {"q", view_json(call.q)},
          {"k", call.k.heads == 0 ? Json(nullptr) : view_json(call.k)},
          {"angles", std::string(to_string(call.angles))},
          {"cos_sin_cache", cache},
          {"qk_norm", norm},
          {"regions", regions},
          {"untouched", "every element outside the views' rows (the regions and any gap between them) must keep "
                        "its bits"}};
}

FormCall form_call_from_json(const Json& j, std::int64_t tokens, const RopeSpec& spec) {
  FormCall call;
  call.storage = form_enum(j.at("storage").get<std::string>(),
                           {StorageType::fp32, StorageType::bf16, StorageType::fp16}, "storage");
  call.elements = j.at("buffer_elements").get<std::int64_t>();
  if (call.elements < 1) throw InvalidInput(fmt::format("call: buffer_elements {}", call.elements));
  call.q = view_from_json(j.at("q"));
  if (!j.at("k").is_null()) call.k = view_from_json(j.at("k"));
  if (call.q.heads < 1 || (!j.at("k").is_null() && call.k.heads < 1)) {
    throw InvalidInput(fmt::format("call: q has {} heads, k {} (a view has heads; k absent is null)", call.q.heads,
                                   call.k.heads));
  }
  validate_view(call.q, tokens, spec.head_dim, call.elements, "call.q");
  validate_view(call.k, tokens, spec.head_dim, call.elements, "call.k");
  validate_disjoint(call.q, call.k, tokens, spec.head_dim);
  call.angles = form_enum(j.at("angles").get<std::string>(), {AngleSource::spec, AngleSource::cos_sin_cache},
                          "angles");
  if (call.angles == AngleSource::cos_sin_cache) {
    call.cache_rows = j.at("cos_sin_cache").at("rows").get<std::int64_t>();
    if (call.cache_rows < 1 || call.cache_rows > kMaxAbsPosition) {
      throw InvalidInput(fmt::format("call: a cos/sin cache of {} rows", call.cache_rows));
    }
  }
  if (!j.at("qk_norm").is_null()) {
    const Json& n = j.at("qk_norm");
    call.has_norm = true;
    call.norm.eps = n.at("eps").get<double>();
    call.norm.weight = form_enum(n.at("weight").get<std::string>(), {NormWeight::plain, NormWeight::one_plus},
                                 "qk_norm weight");
    call.norm.precision = form_enum(n.at("precision").get<std::string>(),
                                    {NormPrecision::fp32, NormPrecision::storage}, "qk_norm precision");
    validate(call.norm);
  }
  for (const Json& r : j.at("regions")) {
    FormRegion region{r.at("name").get<std::string>(), view_from_json(r), r.at("width").get<std::int64_t>()};
    if (region.width < 1) throw InvalidInput(fmt::format("call: region {} has width {}", region.name, region.width));
    validate_view(region.rows, tokens, region.width, call.elements, "call region " + region.name);
    call.regions.push_back(std::move(region));
  }
  return call;
}

std::string form_call_text(const FormCall& call) {
  std::string angles = "angles from the spec";
  if (call.angles == AngleSource::cos_sin_cache) angles = fmt::format("angles from the cos_sin_cache ({} rows)", call.cache_rows);
  return fmt::format("storage {}, {} elements; q {}; k {}; {}; {}", to_string(call.storage), call.elements,
                     describe(call.q), describe(call.k), angles, call.has_norm ? describe(call.norm) : "no qk_norm");
}

}  // namespace ropecheck
