// read_report_inputs(): verify.json, bench.json and accuracy.json -> the plain structs of
// report_data.h. Every field the report uses is checked with a message naming the file and the
// field, so that a foreign or truncated file is exit 2 rather than an empty or wrong plot.
#include "reports/data.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "core/errors.h"

namespace ropecheck {
namespace {

namespace fs = std::filesystem;
// Ordered: the report shows keys (CPU flags, context) in the order the file gives them.
using Json = nlohmann::ordered_json;

Json parse_file(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw InvalidInput(fmt::format("{}: cannot read", file.string()));
  std::ostringstream text;
  text << in.rdbuf();
  try {
    return Json::parse(text.str());
  } catch (const Json::parse_error& e) {
    throw InvalidInput(fmt::format("{}: not JSON: {}", file.string(), e.what()));
  }
}

// Field access that names the file and the JSON path of whatever is wrong.
class Reader {
 public:
  Reader(const fs::path& file, const Json& node, std::string where)
      : file_(file), node_(node), where_(std::move(where)) {}

  [[noreturn]] void fail(const std::string& problem) const {
    throw InvalidInput(fmt::format("{}: {}{}", file_.string(), where_.empty() ? "" : where_ + ": ",
                                   problem));
  }
  const Json& get(const char* key) const {
    if (!node_.is_object()) fail("not an object");
    const auto it = node_.find(key);
    if (it == node_.end()) fail(fmt::format("no \"{}\"", key));
    return *it;
  }
  Reader child(const char* key) const { return {file_, get(key), path(key)}; }
  std::string string(const char* key) const {
    const Json& v = get(key);
    if (!v.is_string()) fail(fmt::format("\"{}\" is not a string", key));
    return v.get<std::string>();
  }
  double number(const char* key) const {
    const Json& v = get(key);
    if (!v.is_number()) fail(fmt::format("\"{}\" is not a number", key));
    return v.get<double>();
  }
  std::optional<double> number_or_null(const char* key) const {
    const Json& v = get(key);
    if (v.is_null()) return std::nullopt;
    return number(key);
  }
  // The string under key, "" where the key is absent or null (fields a row has only when FAILED).
  std::string string_if_present(const char* key) const {
    if (!node_.is_object() || !node_.contains(key) || node_[key].is_null()) return "";
    return string(key);
  }
  bool has(const char* key) const { return node_.is_object() && node_.contains(key) && !node_[key].is_null(); }
  bool boolean(const char* key) const {
    const Json& v = get(key);
    if (!v.is_boolean()) fail(fmt::format("\"{}\" is not a boolean", key));
    return v.get<bool>();
  }
  const Json& array(const char* key) const {
    const Json& v = get(key);
    if (!v.is_array()) fail(fmt::format("\"{}\" is not an array", key));
    return v;
  }
  std::vector<std::string> strings(const char* key) const {
    std::vector<std::string> out;
    for (const Json& v : array(key)) {
      if (!v.is_string()) fail(fmt::format("\"{}\" holds a non-string", key));
      out.push_back(v.get<std::string>());
    }
    return out;
  }
  std::vector<double> numbers(const char* key) const {
    std::vector<double> out;
    for (const Json& v : array(key)) {
      if (!v.is_number()) fail(fmt::format("\"{}\" holds a non-number", key));
      out.push_back(v.get<double>());
    }
    return out;
  }
  Reader element(const char* key, std::size_t i) const {
    return {file_, get(key)[i], fmt::format("{}[{}]", path(key), i)};
  }
  std::string path(const char* key) const { return where_.empty() ? key : where_ + "." + key; }

 private:
  const fs::path& file_;
  const Json& node_;
  std::string where_;
};

// `schema` is the newest version the reader knows; `oldest` the oldest it still reads.
// The schema is the current one or an older one this reader still reads the same.
void expect_schema(const Reader& doc, const char* schema,
                   std::initializer_list<const char*> older = {}) {
  const std::string found = doc.string("schema");
  if (found == schema) return;
  for (const char* old : older) {
    if (found == old) return;
  }
  doc.fail(fmt::format("schema '{}', expected '{}'", found, schema));
}

bool file_exists(const fs::path& file) {
  std::error_code error;
  return fs::exists(file, error);
}

}  // namespace

VerifyData read_verify_data(const fs::path& file) {
  const Json doc = parse_file(file);
  const Reader r(file, doc, "");
  // 2 added the MISTRUSTED status, 3 HANG; older files read the same.
  expect_schema(r, "ropecheck.verify/3", {"ropecheck.verify/2", "ropecheck.verify/1"});
  VerifyData v;
  v.file = file;
  const Reader tool = r.child("tool");
  v.version = tool.string("version");
  v.git_commit = tool.string("git_commit");
  v.compiler = tool.string("compiler");
  v.build_type = tool.string("build_type");
  v.sanitized = tool.boolean("sanitized");
  v.timestamp = r.string("timestamp");
  const Reader machine = r.child("machine");
  v.cpu_model = machine.string("cpu_model");
  v.logical_cpus = static_cast<int>(machine.number("logical_cpus"));
  v.dispatched_isa = machine.string("dispatched_isa");
  v.emulated_on = machine.string_if_present("emulated_on");
  if (machine.has("sve_vector_bits")) v.sve_vector_bits = static_cast<int>(machine.number("sve_vector_bits"));
  const Json& flags = machine.get("cpu_flags");
  if (!flags.is_object()) machine.fail("\"cpu_flags\" is not an object");
  for (const auto& [flag, present] : flags.items()) {
    if (present == true) v.cpu_flags.push_back(flag);
  }
  const Json& results = r.array("results");
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Reader e = r.element("results", i);
    VerifyResultRow row;
    row.subject = e.string("subject");
    row.property = e.string("property");
    row.status = e.string("status");
    row.mutant = e.boolean("mutant");
    row.worst_ratio = e.number_or_null("worst_ratio");
    row.worst_error = e.number_or_null("worst_error");
    row.bound = e.number_or_null("bound");
    row.units = e.string("units");
    row.message = e.string_if_present("message");
    row.counterexample = e.string_if_present("counterexample");
    row.repro_command = e.string_if_present("repro_command");
    v.results.push_back(std::move(row));
  }
  if (doc.contains("kill_matrix")) {
    v.has_kill_matrix = true;
    const Reader km = r.child("kill_matrix");
    v.kill_properties = km.strings("properties");
    const Json& mutants = km.array("mutants");
    for (std::size_t i = 0; i < mutants.size(); ++i) {
      const Reader m = km.element("mutants", i);
      KillRow row;
      row.mutant = m.string("mutant");
      row.verdict = m.string("verdict");
      row.killed_by = m.strings("killed_by");
      const Json& by = m.get("by_property");
      if (!by.is_object()) m.fail("\"by_property\" is not an object");
      for (const auto& [property, status] : by.items()) {
        if (!status.is_string()) m.fail(fmt::format("by_property.{} is not a string", property));
        row.by_property[property] = status.get<std::string>();
      }
      v.kill_rows.push_back(std::move(row));
    }
  }
  return v;
}

void add_case(BenchData& bench, BenchCase c) {
  bench.order.push_back(c.name);
  bench.records.push_back(case_record(c));
  bench.cases[c.name] = std::move(c);
}

BenchData read_bench_data(const fs::path& file) {
  BenchData b;
  b.file = file;
  b.cases = read_bench_json(file);  // the samples, checked field by field (bench_json.h)
  // The context is Google Benchmark's plus the ropecheck_* keys bench_command.cc adds; the
  // report shows it as text, so numbers are kept as their JSON text.
  const Json doc = parse_file(file);
  for (const Json& entry : doc["benchmarks"]) {  // an array: read_bench_json checked it
    const std::string name = entry.value("run_name", entry.value("name", std::string()));
    if (b.cases.contains(name) && std::find(b.order.begin(), b.order.end(), name) == b.order.end()) {
      b.order.push_back(name);
      b.records.push_back(case_record(b.cases.at(name)));
    }
  }
  if (doc.contains("context")) {
    const Json& context = doc["context"];
    if (!context.is_object()) Reader(file, doc, "").fail("\"context\" is not an object");
    for (const auto& [key, value] : context.items()) {
      if (value.is_string()) {
        b.context[key] = value.get<std::string>();
      } else if (value.is_number() || value.is_boolean()) {
        b.context[key] = value.dump();
      }
    }
  }
  return b;
}

AccuracyData read_accuracy_data(const fs::path& file) {
  const Json doc = parse_file(file);
  const Reader r(file, doc, "");
  expect_schema(r, "ropecheck.accuracy/1");
  AccuracyData a;
  a.file = file;
  const Json& curves = r.array("error_vs_position");
  for (std::size_t i = 0; i < curves.size(); ++i) {
    const Reader c = r.element("error_vs_position", i);
    ErrorCurve curve;
    curve.implementation = c.string("implementation");
    curve.angles = c.string("angles");
    curve.storage = c.string("storage");
    const Json& points = c.array("points");
    for (std::size_t j = 0; j < points.size(); ++j) {
      const Reader p = c.element("points", j);
      curve.points.push_back({static_cast<int>(p.number("log2_position")),
                              p.number("worst_error"), p.number("worst_ratio")});
    }
    if (curves[i].contains("largest_position_within_accurate_bound")) {
      curve.largest_accurate_position = c.number("largest_position_within_accurate_bound");
    }
    if (curves[i].contains("error_at_4095")) curve.error_at_4095 = c.number("error_at_4095");
    a.error_vs_position.push_back(std::move(curve));
  }
  if (doc.contains("shift_invariance")) {
    const Json& shifts = r.array("shift_invariance");
    for (std::size_t i = 0; i < shifts.size(); ++i) {
      const Reader c = r.element("shift_invariance", i);
      ShiftCurve curve;
      curve.implementation = c.string("implementation");
      curve.angles = c.string("angles");
      curve.storage = c.string("storage");
      curve.limit = c.number("limit");
      curve.largest_shift = c.number("largest_shift_within_limit");
      const Json& points = c.array("points");
      for (std::size_t j = 0; j < points.size(); ++j) {
        const Reader p = c.element("points", j);
        curve.log2_shift.push_back(p.number("log2_shift"));
        curve.worst_error.push_back(p.number("worst_error"));
      }
      a.shift_invariance.push_back(std::move(curve));
    }
  }
  const Json& decay = r.array("decay");
  for (std::size_t i = 0; i < decay.size(); ++i) {
    const Reader c = r.element("decay", i);
    DecayCurve curve;
    curve.d = static_cast<int>(c.number("d"));
    curve.bound = c.number("bound");
    curve.holds = c.boolean("holds");
    curve.x = c.numbers("x");
    curve.envelope = c.numbers("envelope");
    if (curve.x.size() != curve.envelope.size()) c.fail("\"x\" and \"envelope\" differ in length");
    a.decay.push_back(std::move(curve));
  }
  return a;
}

ReportInputs read_report_inputs(const fs::path& in_dir, const fs::path& baseline_dir) {
  std::error_code error;
  if (!fs::is_directory(in_dir, error)) {
    throw InvalidInput(fmt::format("--in {}: not a directory", in_dir.string()));
  }
  ReportInputs inputs;
  inputs.in_dir = in_dir;
  if (const auto f = in_dir / "verify.json"; file_exists(f)) inputs.verify = read_verify_data(f);
  if (const auto f = in_dir / "bench.json"; file_exists(f)) inputs.bench = read_bench_data(f);
  if (const auto f = in_dir / "accuracy.json"; file_exists(f)) inputs.accuracy = read_accuracy_data(f);
  if (is_counted_run(in_dir)) inputs.counted = read_counted_run(in_dir);
  if (!inputs.verify && !inputs.bench && !inputs.accuracy && !inputs.counted) {
    throw InvalidInput(fmt::format(
        "--in {}: nothing to report: no verify.json, bench.json, accuracy.json or counted.json there "
        "(write them with `ropecheck verify --out DIR` and `ropecheck bench --out DIR`)",
        in_dir.string()));
  }
  if (!baseline_dir.empty()) {
    // A directory may hold both; a file is the one it names.
    const bool counted_file = !fs::is_directory(baseline_dir, error) && is_counted_run(baseline_dir);
    if (const auto f = bench_json_path(baseline_dir); !counted_file && file_exists(f)) {
      inputs.baseline = read_bench_data(f);
    }
    if (is_counted_run(baseline_dir)) inputs.baseline_counted = read_counted_run(baseline_dir);
    if (!inputs.baseline && !inputs.baseline_counted) {
      throw InvalidInput(fmt::format("--baseline {}: no bench.json there, nor counted.json", baseline_dir.string()));
    }
  }
  return inputs;
}

}  // namespace ropecheck
