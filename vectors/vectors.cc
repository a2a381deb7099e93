// run_vectors(): `ropecheck vectors --out DIR` — golden vectors for porters. Every case of
// golden_cases.cc gets a directory of .npy files (inputs, positions, the float64 oracle's
// expected outputs and those rounded to the case's dtype; the fused call's cases of
// rope_cache_golden_cases.cc their caches too, rope_cache_vectors.cc; the call forms' cases of
// rope_form_golden_cases.cc their whole buffers, rope_form_vectors.cc) and DIR/manifest.json lists them with
// their spec (frequency scaling and position axes included), recommended tolerance, HF mapping and conventions, and
// where `ropecheck check` reads a port's outputs. Progress on stderr, the summary on stdout.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <ostream>
#include <system_error>

#include "vectors/vectors.h"
#include "core/exit_codes.h"
#include "vectors/golden_cases.h"
#include "core/logging.h"
#include "core/errors.h"
#include "vectors/npy.h"
#include "impls/oracle/oracle.h"
#include "vectors/manifest.h"
#include "vectors/hf_conventions.h"
#include "vectors/case_writer.h"
#include "vectors/rope_cache_vectors.h"
#include "vectors/rope_form_vectors.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

Json write_rope_case(const GoldenRopeCase& c, const fs::path& out_dir, std::uintmax_t& bytes) {
  CaseWriter writer(out_dir, c.name);
  const std::int64_t tokens = golden_tokens(c);
  const std::string dtype(to_string(c.dtype));
  const int axes = axis_count(c.spec);
  if (axes == 1) {
    writer.write<std::int64_t>("positions", "positions.npy", c.positions, {tokens}, "position of each token");
  } else {
    // Token-major as the spec stores them: row t holds token t's position on each axis.
    writer.write<std::int64_t>("positions", "positions.npy", c.positions, {tokens, axes},
                               fmt::format("positions of each token on its {} axes ({})", axes,
                                           c.spec.axes.mode == AxisMode::vision ? "row, column" : "t, h, w"));
  }
  const auto theta_ld = oracle_inverse_frequencies(c.spec);
  const std::vector<double> theta(theta_ld.begin(), theta_ld.end());
  const bool scaled = c.spec.scaling.kind != ScalingKind::none;
  const bool vision = c.spec.axes.mode == AxisMode::vision;
  writer.write<double>("theta", "theta.npy", theta, {static_cast<std::int64_t>(theta.size())},
                       vision   ? "theta_i of pair i, restarting in each section: the j-th pair of a section "
                                  "has base^(-2j/(rotary_dim/2)), for the fp32-angle bound"
                       : scaled ? "theta_i, base^(-2i/rotary_dim) scaled as spec.scaling says (the "
                                  "frequencies the expected outputs rotate by), for the fp32-angle bound"
                                : "theta_i = base^(-2i/rotary_dim), for the fp32-angle bound");
  for (const auto& [tensor, heads] : {std::pair{std::string("q"), c.q_heads}, {std::string("k"), c.kv_heads}}) {
    const std::vector<std::int64_t> shape = {tokens, heads, c.spec.head_dim};
    const auto count = static_cast<std::size_t>(tokens * heads * c.spec.head_dim);
    const auto input = golden_inputs(c.name, tensor, count, c.dtype, c.input_scale);
    const auto expected = oracle_rope(c.spec, input, tokens, heads, c.positions);
    write_in_dtype(writer, tensor, tensor + ".npy", input, c.dtype, shape, "input");
    writer.write<double>(tensor + "_expected", tensor + "_expected.npy", expected, shape,
                         "exact rotation of the input, float64");
    write_rounded(writer, tensor + "_expected_" + dtype, tensor + "_expected_" + dtype + ".npy",
                  expected, c.dtype, shape, "expected rounded once to " + dtype);
  }
  bytes += writer.bytes();
  Json entry = {{"name", c.name},
                {"kind", "rope"},
                {"description", c.description},
                {"spec", rope_spec_json(c.spec)},
                {"dtype", dtype},
                {"tokens", tokens},
                {"q_heads", c.q_heads},
                {"kv_heads", c.kv_heads},
                {"files", writer.files()},
                {"tolerance", rope_tolerance_json(c.spec, c.dtype)},
                {"outputs", {{"q", port_output_path(c.name, "q")}, {"k", port_output_path(c.name, "k")}}}};
  if (scaled) {
    entry["scaling_effective"] = scaling_effective_json(c.spec);
    entry["hf_transformers"] = hf_transformers_json(c.spec);
    entry["conventions"] = scaling_conventions_json(c.spec, c.positions);
  }
  return entry;
}

// The exact table in long double, as the sinusoidal properties compute it; there is no library
// oracle for the table (sinusoidal/formula is double, rounded to fp32).
std::vector<double> exact_sinusoidal(const SinusoidalSpec& spec, std::span<const std::int64_t> positions) {
  const auto d = static_cast<std::size_t>(spec.d_model);
  std::vector<double> pe(positions.size() * d);
  for (std::size_t t = 0; t < positions.size(); ++t) {
    for (std::size_t i = 0; i < d / 2; ++i) {
      const long double angle =
          static_cast<long double>(positions[t]) *
          std::pow(static_cast<long double>(spec.base), -2.0L * static_cast<long double>(i) / spec.d_model);
      pe[t * d + 2 * i] = static_cast<double>(std::sin(angle));
      pe[t * d + 2 * i + 1] = static_cast<double>(std::cos(angle));
    }
  }
  return pe;
}

Json write_sinusoidal_case(const GoldenSinusoidalCase& c, const fs::path& out_dir,
                           std::uintmax_t& bytes) {
  validate(c.spec);
  CaseWriter writer(out_dir, c.name);
  const auto tokens = static_cast<std::int64_t>(c.positions.size());
  const std::vector<std::int64_t> shape = {tokens, c.spec.d_model};
  writer.write<std::int64_t>("positions", "positions.npy", c.positions, {tokens}, "positions");
  const auto expected = exact_sinusoidal(c.spec, c.positions);
  writer.write<double>("pe_expected", "pe_expected.npy", expected, shape,
                       "exact table, float64");
  write_rounded(writer, "pe_expected_fp32", "pe_expected_fp32.npy", expected, StorageType::fp32,
                shape, "expected rounded once to fp32");
  bytes += writer.bytes();
  return {{"name", c.name},
          {"kind", "sinusoidal"},
          {"description", c.description},
          {"spec", {{"d_model", c.spec.d_model}, {"base", c.spec.base}, {"angle_precision", "fp64"}}},
          {"dtype", "fp32"},
          {"tokens", tokens},
          {"files", writer.files()},
          {"tolerance", sinusoidal_tolerance_json()},
          {"outputs", {{"pe", port_output_path(c.name, "pe")}}}};
}

void prepare_out_dir(const fs::path& out_dir) {
  if (out_dir.empty()) throw InvalidInput("vectors: --out DIR is required");
  std::error_code error;
  const auto status = fs::status(out_dir, error);
  if (fs::exists(status) && !fs::is_directory(status)) {
    throw InvalidInput(fmt::format("vectors: --out {} exists and is not a directory", out_dir.string()));
  }
  fs::create_directories(out_dir, error);
  if (error) {
    throw InvalidInput(fmt::format("vectors: cannot create {}: {}", out_dir.string(), error.message()));
  }
}

}  // namespace

int run_vectors(const VectorsOptions& options, std::ostream& out) {
  prepare_out_dir(options.out_dir);
  auto& log = progress_log();
  Json manifest = vectors_manifest_head();
  Json cases = Json::array();
  std::uintmax_t bytes = 0;
  for (const auto& c : golden_rope_cases()) {
    log.info("vectors: {} ({} {}, {} tokens)", c.name, to_string(c.spec.layout), to_string(c.dtype),
             golden_tokens(c));
    cases.push_back(write_rope_case(c, options.out_dir, bytes));
  }
  for (const auto& c : golden_sinusoidal_cases()) {
    log.info("vectors: {} (d_model {}, {} positions)", c.name, c.spec.d_model, c.positions.size());
    cases.push_back(write_sinusoidal_case(c, options.out_dir, bytes));
  }
  for (const auto& c : golden_rope_cache_cases()) {
    log.info("vectors: {} (fused, {} {} cache, block size {}, {} tokens)", c.name, to_string(c.cache.layout),
             to_string(c.cache.storage), c.cache.block_size, c.positions.size());
    cases.push_back(write_rope_cache_case(c, options.out_dir, bytes));
  }
  for (const auto& c : golden_rope_form_cases()) {
    log.info("vectors: {} (call form, {}, angles from the {}, {})", c.name, to_string(c.call.storage),
             to_string(c.call.angles), c.call.has_norm ? describe(c.call.norm) : "no qk_norm");
    cases.push_back(write_rope_form_case(c, options.out_dir, bytes));
  }
  manifest["cases"] = std::move(cases);

  const fs::path manifest_path = options.out_dir / "manifest.json";
  const std::string text = manifest.dump(2) + "\n";
  std::ofstream file(manifest_path, std::ios::trunc);
  file << text;
  file.close();
  if (!file) throw InvalidInput(fmt::format("cannot write {}", manifest_path.string()));
  bytes += text.size();

  const auto scaled = std::count_if(
      golden_rope_cases().begin(), golden_rope_cases().end(),
      [](const GoldenRopeCase& c) { return c.spec.scaling.kind != ScalingKind::none; });
  const auto multi_axis = std::count_if(
      golden_rope_cases().begin(), golden_rope_cases().end(),
      [](const GoldenRopeCase& c) { return c.spec.axes.mode != AxisMode::none; });
  out << fmt::format("{} golden cases ({} rope, {} of them frequency-scaled, {} multi-axis; {} sinusoidal; "
                     "{} rope_cache, the fused call; {} rope_form, the call forms with QK-norm), {} bytes, in "
                     "{}\nmanifest: {}\n",
                     manifest["cases"].size(), golden_rope_cases().size(), scaled, multi_axis,
                     golden_sinusoidal_cases().size(), golden_rope_cache_cases().size(),
                     golden_rope_form_cases().size(), bytes, options.out_dir.string(),
                     manifest_path.string());
  return kExitOk;
}

}  // namespace ropecheck
