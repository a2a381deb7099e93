// write_rope_form_case (rope_form_vectors.h): one call form case's files from the float64 truth
// (impls/oracle/oracle_rope_form.h) and its manifest entry. The bound files come from the judge's
// own form_element_bound on the tolerance the entry states, so they cannot disagree with `check`.
#include "vectors/rope_form_vectors.h"

#include <fmt/format.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/storage.h"
#include "impls/oracle/oracle.h"
#include "impls/oracle/oracle_rope_form.h"
#include "vectors/case_writer.h"
#include "vectors/golden_cases.h"
#include "vectors/judge_rope_form.h"
#include "vectors/manifest.h"
#include "vectors/rope_form_manifest.h"
#include "vectors/round_once.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

const char* form_descr(StorageType storage) {
  switch (storage) {
    case StorageType::bf16: return kNpyUint16;
    case StorageType::fp16: return kNpyFloat16;
    case StorageType::fp32: break;
  }
  return kNpyFloat32;
}

// The buffer before the call: golden inputs in the storage, whole (v and gaps included).
std::vector<std::byte> form_input_buffer(const GoldenRopeFormCase& c) {
  const StorageType storage = c.call.storage;
  const auto values = golden_inputs(c.name, "buffer", static_cast<std::size_t>(c.call.elements), storage, c.input_scale);
  std::vector<std::byte> buffer(values.size() * static_cast<std::size_t>(element_bytes(storage)));
  for (std::size_t i = 0; i < values.size(); ++i) store_element(storage, buffer, static_cast<std::int64_t>(i), values[i]);
  return buffer;
}

// A norm's weight, exact in the storage: plain around 1 ([0.5, 1.5)), one_plus around 0
// ([-0.5, 0.5)) as the checkpoints hold them, so that the other convention is far off.
std::vector<float> form_weight(const GoldenRopeFormCase& c, const char* which) {
  auto w = golden_inputs(c.name, std::string(which) + "_weight", static_cast<std::size_t>(c.spec.head_dim),
                         c.call.storage, 0.25f);
  if (c.call.norm.weight == NormWeight::plain) {
    for (float& x : w) x = round_to_storage(1.0f + x, c.call.storage);
  }
  return w;
}

// A view's rows gathered [tokens][heads][head_dim], widened exactly.
std::vector<float> gather_rows(const GoldenRopeFormCase& c, const HeadView& view, std::span<const std::byte> buffer) {
  const std::int64_t tokens = static_cast<std::int64_t>(c.positions.size()), d = c.spec.head_dim;
  std::vector<float> rows;
  rows.reserve(static_cast<std::size_t>(tokens * view.heads * d));
  for (std::int64_t t = 0; t < tokens; ++t) {
    for (std::int64_t h = 0; h < view.heads; ++h) {
      for (std::int64_t f = 0; f < d; ++f) rows.push_back(load_element(c.call.storage, buffer, row_start(view, t, h) + f));
    }
  }
  return rows;
}

// A float64 value rounded once, straight to the storage, at element `index`.
void store_rounded_once(StorageType storage, std::span<std::byte> buffer, std::int64_t index, double y) {
  if (storage == StorageType::fp32) {
    store_element(storage, buffer, index, static_cast<float>(y));
    return;
  }
  const std::uint16_t bits = storage == StorageType::bf16 ? bf16_from_double(y) : fp16_from_double(y).bits;
  std::memcpy(buffer.data() + index * 2, &bits, 2);
}

}  // namespace

Json write_rope_form_case(const GoldenRopeFormCase& c, const fs::path& out_dir, std::uintmax_t& bytes) {
  CaseWriter writer(out_dir, c.name);
  const FormCall& call = c.call;
  const StorageType storage = call.storage;
  const std::string storage_name(to_string(storage));
  const auto tokens = static_cast<std::int64_t>(c.positions.size());
  const std::int64_t d = c.spec.head_dim;
  validate(c.spec);
  validate_view(call.q, tokens, d, call.elements, "q");
  validate_view(call.k, tokens, d, call.elements, "k");
  validate_disjoint(call.q, call.k, tokens, d);

  const std::vector<std::byte> before = form_input_buffer(c);
  writer.write_bytes("buffer", "buffer.npy", form_descr(storage), before, {call.elements},
                     fmt::format("the call's buffer before it ({}): q, k and everything around them, flat; "
                                 "call.q and call.k say where the views' rows are",
                                 storage_name));
  writer.write<std::int64_t>("positions", "positions.npy", c.positions, {tokens}, "position of each token");
  const auto theta_ld = oracle_inverse_frequencies(c.spec);
  const std::vector<double> theta(theta_ld.begin(), theta_ld.end());
  writer.write<double>("theta", "theta.npy", theta, {static_cast<std::int64_t>(theta.size())},
                       "theta_i the expected outputs rotate by (scaled as spec.scaling says), for the fp32-angle bound");
  if (call.angles == AngleSource::cos_sin_cache) {
    const std::vector<float> cache = build_cos_sin_cache(c.spec, call.cache_rows);
    writer.write<float>("cos_sin_cache", "cos_sin_cache.npy", cache, {call.cache_rows, c.spec.rotary_dim},
                        "the cos/sin cache the call reads: row m = cos(m theta_i) a for i < rotary_dim/2, then "
                        "sin(m theta_i) a, each computed in double and rounded once to fp32");
  }

  // The manifest's view of the case, for the bounds: what `check` will read back.
  ManifestCase judged;
  judged.kind = "rope_form";
  judged.rope_spec = c.spec;
  judged.form = call;
  const Json rotation_tolerance = rope_tolerance_json(c.spec, storage);
  judged.rope_tolerance = rope_tolerance_from_json(rotation_tolerance);
  judged.form_norm = form_norm_tolerance(call.has_norm ? &call.norm : nullptr, static_cast<int>(d), storage);

  std::vector<std::byte> after = before;
  for (const bool of_q : {true, false}) {
    const HeadView& view = of_q ? call.q : call.k;
    if (view.heads == 0) continue;
    const std::string name = of_q ? "q" : "k";
    const std::vector<float> x = gather_rows(c, view, before);
    const std::vector<float> weight = call.has_norm ? form_weight(c, name.c_str()) : std::vector<float>{};
    const NormRopeTruth truth =
        oracle_norm_rope(c.spec, call.has_norm ? &call.norm : nullptr, weight, x, tokens, view.heads, c.positions);
    const std::vector<std::int64_t> shape = {tokens, view.heads, d};
    std::vector<double> bound(truth.rotated.size());
    for (std::int64_t t = 0; t < tokens; ++t) {
      for (std::int64_t h = 0; h < view.heads; ++h) {
        const auto row = static_cast<std::size_t>((t * view.heads + h) * d);
        const std::span<const double> normalized(truth.normalized.data() + row, static_cast<std::size_t>(d));
        for (std::int64_t f = 0; f < d; ++f) {
          bound[row + static_cast<std::size_t>(f)] = form_element_bound(
              judged, AnglePrecision::fp64, c.positions[static_cast<std::size_t>(t)], theta, normalized, static_cast<int>(f));
          store_rounded_once(storage, after, row_start(view, t, h) + f, truth.rotated[row + static_cast<std::size_t>(f)]);
        }
      }
    }
    if (call.has_norm) {
      writer.write<float>(name + "_weight", name + "_weight.npy", weight, {d},
                          fmt::format("{}'s QK-norm weight w (values exact in {}); applied as {}", name, storage_name,
                                      call.norm.weight == NormWeight::plain ? "w" : "1 + w"));
      writer.write<double>(name + "_normalized", name + "_normalized.npy", truth.normalized, shape,
                           fmt::format("{}'s rows normalized, before the rotation, float64 (long double norm rounded "
                                       "once): the pairs the bound is measured on",
                                       name));
    }
    writer.write<double>(name + "_expected", name + "_expected.npy", truth.rotated, shape,
                         fmt::format("{}'s rows after the call, float64: {}rotated{}", name,
                                     call.has_norm ? "normalized, then " : "",
                                     c.spec.rotary_dim < d ? " (features past rotary_dim not rotated)" : ""));
    writer.write<double>(name + "_bound", name + "_bound.npy", bound, shape,
                         fmt::format("the bound on |{}_out - {}_expected| per element at fp64 angles (the cache form: "
                                     "the only one), absolute; 0 past rotary_dim without a norm: bit for bit",
                                     name, name));
  }
  writer.write_bytes("buffer_expected_" + storage_name, "buffer_expected_" + storage_name + ".npy",
                     form_descr(storage), after, {call.elements},
                     fmt::format("the buffer after the call: each view row's element the expected value rounded once "
                                 "to {}, every other element buffer.npy's bits",
                                 storage_name));
  bytes += writer.bytes();

  Json entry = {{"name", c.name},
                {"kind", "rope_form"},
                {"description", c.description},
                {"spec", rope_spec_json(c.spec)},
                {"dtype", storage_name},
                {"tokens", tokens},
                {"call", form_call_json(call, c.spec)},
                {"files", writer.files()},
                {"tolerance",
                 {{"rotation", rotation_tolerance},
                  {"qk_norm", form_norm_tolerance_json(judged.form_norm, call.has_norm ? &call.norm : nullptr,
                                                       static_cast<int>(d))}}},
                {"outputs", {{"buffer", port_output_path(c.name, "buffer")}}}};
  if (c.spec.scaling.kind != ScalingKind::none) entry["scaling_effective"] = scaling_effective_json(c.spec);
  return entry;
}

}  // namespace ropecheck
