// check_outputs() and run_check() (check.h): find each case's output files, judge them with
// judge.h, print one row per case. A malformed output stops the run (exit 2) before any verdict
// is printed: a half-read output set has no verdict.
#include "vectors/check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <ostream>

#include "core/errors.h"
#include "core/exit_codes.h"
#include "core/text_table.h"
#include "vectors/judge_rope_cache.h"
#include "vectors/judge_rope_form.h"
#include "vectors/manifest.h"
#include "vectors/npy.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;

std::string shape_text(const std::vector<std::int64_t>& shape) {
  return fmt::format("({})", fmt::join(shape, ", "));
}

std::string descr_meaning(const std::string& descr) {
  if (descr == kNpyFloat32) return "fp32";
  if (descr == kNpyFloat16) return "fp16";
  if (descr == kNpyUint16) return "bf16 bit patterns";
  return descr;
}

// A port's output for a case's file `like`: same dtype and shape, widened to float.
std::vector<float> read_output(const fs::path& path, const ManifestFile& like) {
  const NpyArray array = read_npy(path);  // throws naming the path when unreadable or malformed
  if (array.descr != like.descr) {
    throw InvalidInput(fmt::format("{}: dtype '{}', expected '{}' ({}, as {})", path.string(),
                                   array.descr, like.descr, descr_meaning(like.descr),
                                   like.path.filename().string()));
  }
  if (array.shape != like.shape) {
    throw InvalidInput(fmt::format("{}: shape {}, expected {} (as {})", path.string(),
                                   shape_text(array.shape), shape_text(like.shape),
                                   like.path.filename().string()));
  }
  return array.stored_as_float32();
}

std::vector<double> read_float64(const ManifestFile& file) {
  return read_npy(file.path).as_float64();
}

// The tensors a case's port writes, and the file of the case each must look like.
std::vector<std::pair<std::string, std::string>> output_tensors(const ManifestCase& c) {
  if (c.kind == "rope") return {{"q", "q"}, {"k", "k"}};
  if (c.kind == "rope_form") return {{"buffer", "buffer"}};
  if (c.kind == "rope_cache") {
    if (c.cache.layout == CacheLayout::mla) return {{"q", "q"}, {"k_cache", "k_cache_initial"}};
    return {{"q", "q"}, {"k_cache", "k_cache_initial"}, {"v_cache", "v_cache_initial"}};
  }
  return {{"pe", "pe_expected_fp32"}};
}

// A port's cache: the initial cache's descr and shape, its bytes as they are.
std::vector<std::byte> read_cache_output(const fs::path& path, const ManifestFile& like) {
  NpyArray array = read_npy(path);
  if (array.descr != like.descr || array.shape != like.shape) {
    throw InvalidInput(fmt::format("{}: dtype '{}' shape {}, expected '{}' {} (as {})", path.string(), array.descr,
                                   shape_text(array.shape), like.descr, shape_text(like.shape),
                                   like.path.filename().string()));
  }
  return std::move(array.data);
}

// The vectors' own files must agree with each other and with the spec, or the judge would index
// past them: a hand-edited or truncated vectors directory is bad input, not a crash.
void require_elements(const ManifestFile& file, std::size_t got, std::size_t want) {
  if (got != want) {
    throw InvalidInput(fmt::format("{}: {} elements, the manifest's case needs {}", file.path.string(),
                                   got, want));
  }
}

// A RoPE case's positions: [tokens] with one axis, [tokens][axes] with several (spec.axes); any
// other shape is a vectors directory that does not match its manifest.
std::vector<std::int64_t> read_positions(const ManifestCase& c) {
  const ManifestFile& file = c.file("positions");
  const NpyArray array = read_npy(file.path);
  const int axes = c.kind == "sinusoidal" ? 1 : axis_count(c.rope_spec);
  const std::vector<std::int64_t> want =
      axes == 1 ? std::vector<std::int64_t>{array.elements()} : std::vector<std::int64_t>{array.elements() / axes, axes};
  if (array.shape != want || array.elements() % axes != 0) {
    throw InvalidInput(fmt::format("{}: shape {}, expected [tokens]{} ({})", file.path.string(),
                                   shape_text(array.shape), axes == 1 ? "" : fmt::format("[{}]", axes),
                                   axes == 1 ? "one position per token"
                                             : fmt::format("{} axes: spec.axes", to_string(c.rope_spec.axes.mode))));
  }
  return array.as_int64();
}

// A rope_cache case's files, each checked against the shapes the manifest's cache implies.
RopeCacheCaseData read_rope_cache_data(const ManifestCase& c) {
  RopeCacheCaseData data;
  data.positions = read_positions(c);
  const auto tokens = data.positions.size() / static_cast<std::size_t>(axis_count(c.rope_spec));
  data.slots = read_npy(c.file("slots").path).as_int64();
  require_elements(c.file("slots"), data.slots.size(), tokens);
  validate_slots(c.cache, data.slots);
  data.theta = read_float64(c.file("theta"));
  require_elements(c.file("theta"), data.theta.size(), static_cast<std::size_t>(c.rope_spec.rotary_dim / 2));
  const auto head_dim = static_cast<std::size_t>(c.rope_spec.head_dim);
  const auto kv_heads = static_cast<std::size_t>(c.cache.kv_heads);
  data.q = read_npy(c.file("q").path).as_float32();
  require_elements(c.file("q"), data.q.size(), tokens * static_cast<std::size_t>(c.q_heads) * head_dim);
  data.k = read_npy(c.file("k").path).as_float32();
  require_elements(c.file("k"), data.k.size(), tokens * kv_heads * head_dim);
  data.q_expected = read_float64(c.file("q_expected"));
  require_elements(c.file("q_expected"), data.q_expected.size(), data.q.size());
  const auto cache_bytes = static_cast<std::size_t>(cache_elements(c.cache) * element_bytes(c.cache.storage));
  const bool mla = c.cache.layout == CacheLayout::mla;
  for (const std::string which : {"k", "v"}) {
    if (mla && which == "v") break;
    const auto features = static_cast<std::size_t>(which == "k" ? row_features(c.cache) : c.cache.head_dim);
    auto& rows = which == "k" ? data.k_rows : data.v_rows;
    rows = read_float64(c.file(which + "_rows_expected"));
    require_elements(c.file(which + "_rows_expected"), rows.size(), tokens * kv_heads * features);
    const ManifestFile& initial = c.file(which + "_cache_initial");
    auto& bytes = which == "k" ? data.k_initial : data.v_initial;
    bytes = read_npy(initial.path).data;
    require_elements(initial, bytes.size(), cache_bytes);
  }
  return data;
}

// A rope_form case's files, each checked against the sizes its call implies; without a norm the
// rows before the rotation are the input's.
RopeFormCaseData read_rope_form_data(const ManifestCase& c) {
  RopeFormCaseData data;
  data.positions = read_positions(c);
  const auto tokens = data.positions.size();
  require_elements(c.file("positions"), tokens, static_cast<std::size_t>(c.tokens));
  if (c.form.angles == AngleSource::cos_sin_cache) {
    for (const std::int64_t m : data.positions) {
      if (m < 0 || m >= c.form.cache_rows) {
        throw InvalidInput(fmt::format("{}: position {} is past the cos/sin cache's {} rows",
                                       c.file("positions").path.string(), m, c.form.cache_rows));
      }
    }
  }
  data.theta = read_float64(c.file("theta"));
  require_elements(c.file("theta"), data.theta.size(), static_cast<std::size_t>(c.rope_spec.rotary_dim / 2));
  const ManifestFile& buffer = c.file("buffer");
  data.buffer = read_npy(buffer.path).data;
  require_elements(buffer, data.buffer.size(),
                   static_cast<std::size_t>(c.form.elements * element_bytes(c.form.storage)));
  const auto d = static_cast<std::size_t>(c.rope_spec.head_dim);
  for (const bool of_q : {true, false}) {
    const HeadView& view = of_q ? c.form.q : c.form.k;
    if (view.heads == 0) continue;
    const std::string name = of_q ? "q" : "k";
    const std::size_t count = tokens * static_cast<std::size_t>(view.heads) * d;
    auto& expected = of_q ? data.q_expected : data.k_expected;
    auto& normalized = of_q ? data.q_normalized : data.k_normalized;
    expected = read_float64(c.file(name + "_expected"));
    require_elements(c.file(name + "_expected"), expected.size(), count);
    if (c.form.has_norm) {
      normalized = read_float64(c.file(name + "_normalized"));
      require_elements(c.file(name + "_normalized"), normalized.size(), count);
      continue;
    }
    normalized.reserve(count);
    for (std::size_t t = 0; t < tokens; ++t) {
      for (std::int64_t h = 0; h < view.heads; ++h) {
        for (std::size_t f = 0; f < d; ++f) {
          normalized.push_back(load_element(c.form.storage, data.buffer,
                                            row_start(view, static_cast<std::int64_t>(t), h) + static_cast<std::int64_t>(f)));
        }
      }
    }
  }
  return data;
}

CaseCheck judge_rope_form_case(const ManifestCase& c, const fs::path& outputs_dir, AnglePrecision angles) {
  const RopeFormCaseData data = read_rope_form_data(c);
  const std::vector<std::byte> out =
      read_cache_output(outputs_dir / port_output_path(c.name, "buffer"), c.file("buffer"));
  const RopeFormVerdict verdict = judge_rope_form(c, data, out, angles);
  CaseCheck row;
  row.worst = verdict.worst;
  row.first_wrong = verdict.first_wrong;
  row.call = rope_form_call_text(c, data.positions);
  return row;
}

CaseCheck judge_rope_cache_case(const ManifestCase& c, const fs::path& outputs_dir, AnglePrecision angles) {
  const RopeCacheCaseData data = read_rope_cache_data(c);
  RopeCacheOutputs out;
  out.q = read_output(outputs_dir / port_output_path(c.name, "q"), c.file("q"));
  out.k_cache = read_cache_output(outputs_dir / port_output_path(c.name, "k_cache"), c.file("k_cache_initial"));
  if (c.cache.layout != CacheLayout::mla) {
    out.v_cache = read_cache_output(outputs_dir / port_output_path(c.name, "v_cache"), c.file("v_cache_initial"));
  }
  const RopeCacheVerdict verdict = judge_rope_cache(c, data, out, angles);
  CaseCheck row;
  row.worst = verdict.worst;
  row.first_wrong = verdict.first_wrong;
  row.call = rope_cache_call_text(c, data.slots);
  return row;
}

WorstError judge_case(const ManifestCase& c, const fs::path& outputs_dir, AnglePrecision angles) {
  const auto positions = read_positions(c);
  const std::size_t tokens = positions.size() / static_cast<std::size_t>(c.kind == "rope" ? axis_count(c.rope_spec) : 1);
  WorstError worst;
  if (c.kind == "sinusoidal") {
    const ManifestFile& expected_file = c.file("pe_expected");
    const auto expected = read_float64(expected_file);
    require_elements(expected_file, expected.size(),
                     tokens * static_cast<std::size_t>(c.sinusoidal_spec.d_model));
    const auto output =
        read_output(outputs_dir / port_output_path(c.name, "pe"), c.file("pe_expected_fp32"));
    require_elements(c.file("pe_expected_fp32"), output.size(), expected.size());
    return judge_sinusoidal_table(c, output, expected, positions, angles);
  }
  const auto theta = read_float64(c.file("theta"));
  require_elements(c.file("theta"), theta.size(), static_cast<std::size_t>(c.rope_spec.rotary_dim / 2));
  for (const std::string tensor : {"q", "k"}) {
    const ManifestFile& input_file = c.file(tensor);
    const auto input = read_npy(input_file.path).stored_as_float32();
    const std::vector<std::int64_t>& shape = input_file.shape;
    if (shape.size() != 3 || shape[0] != static_cast<std::int64_t>(tokens) || shape[1] < 1 ||
        shape[2] != c.rope_spec.head_dim) {
      throw InvalidInput(fmt::format("{}: the manifest's shape {} is not [tokens = {}][heads][head_dim "
                                     "= {}]", input_file.path.string(), shape_text(shape), tokens,
                                     c.rope_spec.head_dim));
    }
    require_elements(input_file, input.size(), tokens * static_cast<std::size_t>(shape[1] * shape[2]));
    const auto output = read_output(outputs_dir / port_output_path(c.name, tensor), input_file);
    const auto expected = read_float64(c.file(tensor + "_expected"));
    require_elements(c.file(tensor + "_expected"), expected.size(), input.size());
    worst = worse_of(worst,
                     judge_rope_tensor(c, tensor, input, output, expected, positions, theta, angles));
  }
  return worst;
}

std::string number(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return fmt::format("{:.3g}", x);
}

std::string_view verdict_text(CheckVerdict v) {
  switch (v) {
    case CheckVerdict::pass: return "PASS";
    case CheckVerdict::fail: return "FAIL";
    case CheckVerdict::missing: break;
  }
  return "MISSING";
}

std::string expected_names(const std::string& kind) {
  if (kind == "rope_form") return "<case>/buffer_out.npy";
  if (kind == "rope_cache") return "<case>/q_out.npy, <case>/k_cache_out.npy and <case>/v_cache_out.npy";
  return kind == "rope" ? "<case>/q_out.npy and <case>/k_out.npy" : "<case>/pe_out.npy";
}

std::string default_units(const std::string& kind) {
  return kind == "sinusoidal" ? "eps32" : "eps32*|pair|";
}

}  // namespace

int CheckReport::exit_code() const { return failed == 0 && missing == 0 ? kExitOk : kExitFailed; }

CheckReport check_outputs(const CheckOptions& options) {
  if (options.kind != "rope" && options.kind != "sinusoidal" && options.kind != "rope_cache" &&
      options.kind != "rope_form") {
    throw InvalidInput(fmt::format("check: --kind '{}' (rope, sinusoidal, rope_cache, rope_form)", options.kind));
  }
  const Manifest manifest = read_manifest(options.vectors_dir);
  std::error_code error;
  if (!fs::is_directory(options.outputs_dir, error)) {
    throw InvalidInput(fmt::format("--outputs {}: not a directory", options.outputs_dir.string()));
  }
  CheckReport report;
  bool any_output = false;
  // First which files exist, so that a run with no outputs at all is refused before judging.
  for (const ManifestCase& c : manifest.cases) {
    if (c.kind != options.kind) continue;
    CaseCheck row;
    row.name = c.name;
    // A fused case's q is fp32; what sets it apart is its cache's storage.
    row.dtype = c.kind == "rope_cache" ? std::string(to_string(c.cache.storage)) : std::string(to_string(c.dtype));
    for (const auto& [tensor, like] : output_tensors(c)) {
      const std::string relative = port_output_path(c.name, tensor);
      if (fs::exists(options.outputs_dir / relative, error)) {
        any_output = true;
      } else {
        row.missing.push_back(relative);
      }
    }
    report.cases.push_back(std::move(row));
  }
  if (!any_output) {
    throw InvalidInput(fmt::format("--outputs {}: no output of any {} case of {} (a port writes {}, "
                                   "see `ropecheck check --help`)",
                                   options.outputs_dir.string(), options.kind, manifest.path.string(),
                                   expected_names(options.kind)));
  }
  std::size_t at = 0;
  for (const ManifestCase& c : manifest.cases) {
    if (c.kind != options.kind) continue;
    CaseCheck& row = report.cases[at++];
    if (!row.missing.empty()) {
      // Excused only when the port wrote nothing for the case: a half-written case is a failure.
      row.counted = !(options.only_present && row.missing.size() == output_tensors(c).size());
      (row.counted ? report.missing : report.excused) += 1;
      continue;
    }
    if (c.kind == "rope_cache" || c.kind == "rope_form") {
      CaseCheck judged = c.kind == "rope_cache" ? judge_rope_cache_case(c, options.outputs_dir, options.angles)
                                                : judge_rope_form_case(c, options.outputs_dir, options.angles);
      row.worst = std::move(judged.worst);
      row.first_wrong = std::move(judged.first_wrong);
      row.call = std::move(judged.call);
    } else {
      row.worst = judge_case(c, options.outputs_dir, options.angles);
    }
    row.verdict = row.worst.ratio <= 1.0 ? CheckVerdict::pass : CheckVerdict::fail;
    (row.verdict == CheckVerdict::pass ? report.passed : report.failed) += 1;
  }
  return report;
}

int run_check(const CheckOptions& options, std::ostream& out) {
  const CheckReport report = check_outputs(options);
  using Align = TextTable::Align;
  TextTable table({"STATUS", "CASE", "DTYPE", "WORST/BOUND", "WORST ERROR / BOUND"},
                  {Align::left, Align::left, Align::left, Align::right, Align::left});

  for (const CaseCheck& row : report.cases) {
    if (row.verdict == CheckVerdict::missing) {
      table.add_row({"MISSING", row.name, row.dtype, "-", "-"});
      table.add_note(fmt::format("    not found: {}{}", fmt::join(row.missing, ", "),
                                 row.counted ? "" : " (not counted: --only-present)"));
      continue;
    }
    const std::string units = row.worst.units.empty() ? default_units(options.kind) : row.worst.units;
    table.add_row({std::string(verdict_text(row.verdict)), row.name, row.dtype, number(row.worst.ratio),
                   fmt::format("{} / {} {}", number(row.worst.error), number(row.worst.bound), units)});
    if (row.verdict != CheckVerdict::fail) continue;
    // A fused or call form case reads as the call that failed, then its first wrong element.
    if (!row.call.empty()) {
      table.add_note("    call: " + row.call);
      table.add_note("    first wrong: " + row.first_wrong);
      if (row.first_wrong == row.worst.where) continue;
    }
    table.add_note("    worst: " + row.worst.where);
  }
  table.print(out);
  const std::string excused =
      report.excused > 0 ? fmt::format(" ({} more not counted: --only-present)", report.excused) : "";
  out << fmt::format("check: {} {} cases, {} passed, {} failed, {} missing{}; {} angles; outputs read "
                     "from {}: {}\n",
                     report.cases.size(), options.kind, report.passed, report.failed, report.missing,
                     excused, to_string(options.angles), options.outputs_dir.string(),
                     expected_names(options.kind));
  if (report.failed > 0 && options.angles == AnglePrecision::fp64) {
    out << "(held to the fp64-angle bound; a port that forms m*theta_i in fp32 declares --angles fp32)\n";
  }
  return report.exit_code();
}

}  // namespace ropecheck
