// entry_to_json(), entry_from_json() and read_entry() (entry.h). Reading checks every field with
// a message that names the file and the JSON path, so that a truncated or foreign file in a
// history is bad input (exit 2) rather than a silently wrong line on a plot.
#include "history/entry.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <utility>

#include "core/errors.h"
#include "history/iso_time.h"

namespace ropecheck::history {
namespace {

namespace fs = std::filesystem;
using OrderedJson = nlohmann::ordered_json;

// Field access naming the file and the JSON path of whatever is wrong.
class EntryField {
 public:
  EntryField(const fs::path& file, const OrderedJson& node, std::string where)
      : file_(file), node_(node), where_(std::move(where)) {}

  [[noreturn]] void fail(const std::string& problem) const {
    throw InvalidInput(fmt::format("{}: {}{}", file_.string(), where_.empty() ? "" : where_ + ": ", problem));
  }
  const OrderedJson& get(const char* key) const {
    if (!node_.is_object()) fail("not an object");
    const auto it = node_.find(key);
    if (it == node_.end()) fail(fmt::format("no \"{}\"", key));
    return *it;
  }
  EntryField child(const char* key) const {
    if (!get(key).is_object()) fail(fmt::format("\"{}\" is not an object", key));
    return {file_, get(key), path(key)};
  }
  std::string string(const char* key) const {
    const auto& v = get(key);
    if (!v.is_string()) fail(fmt::format("\"{}\" is not a string", key));
    return v.get<std::string>();
  }
  std::string id(const char* key) const {
    const std::string v = string(key);
    if (!is_file_name_id(v)) {
      fail(fmt::format("\"{}\" '{}' is not an id of 1-100 letters, digits, '.', '_' or '-'", key, v));
    }
    return v;
  }
  std::int64_t date(const char* key) const {
    const std::string v = string(key);
    const auto t = parse_iso8601(v);
    if (!t) fail(fmt::format("\"{}\" '{}' is not an ISO 8601 date-time", key, v));
    return *t;
  }
  std::int64_t big_count(const char* key) const {
    const auto& v = get(key);
    if (!v.is_number_integer() || v.get<long long>() < 0) fail(fmt::format("\"{}\" is not a count", key));
    return v.get<long long>();
  }
  int count(const char* key) const {
    const auto& v = get(key);
    if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() > 1'000'000) {
      fail(fmt::format("\"{}\" is not a count", key));
    }
    return static_cast<int>(v.get<long long>());
  }
  double number(const char* key) const {
    const auto& v = get(key);
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) {
      fail(fmt::format("\"{}\" is not a finite number >= 0", key));
    }
    return v.get<double>();
  }
  std::vector<std::string> strings(const char* key) const {
    const auto& v = get(key);
    if (!v.is_array()) fail(fmt::format("\"{}\" is not an array", key));
    std::vector<std::string> out;
    for (const auto& s : v) {
      if (!s.is_string()) fail(fmt::format("\"{}\" holds a non-string", key));
      out.push_back(s.get<std::string>());
    }
    return out;
  }
  // Samples: finite and > 0 each.
  std::vector<double> samples(const char* key) const {
    const auto& v = get(key);
    if (!v.is_array()) fail(fmt::format("\"{}\" is not an array", key));
    std::vector<double> out;
    for (const auto& x : v) {
      if (!x.is_number() || !std::isfinite(x.get<double>()) || !(x.get<double>() > 0)) {
        fail(fmt::format("\"{}\" holds a value that is not a finite number > 0", key));
      }
      out.push_back(x.get<double>());
    }
    return out;
  }
  EntryField element(const char* key, std::size_t i) const {
    return {file_, get(key)[i], fmt::format("{}[{}]", path(key), i)};
  }
  std::string path(const char* key) const { return where_.empty() ? key : where_ + "." + key; }

 private:
  const fs::path& file_;
  const OrderedJson& node_;
  std::string where_;
};

// callgrind's events as counted.json names them (bench/format/counted_json.h).
constexpr std::pair<const char*, std::uint64_t EventCounts::*> kEntryEvents[] = {
    {"Ir", &EventCounts::ir},     {"Dr", &EventCounts::dr},     {"Dw", &EventCounts::dw},
    {"I1mr", &EventCounts::i1mr}, {"D1mr", &EventCounts::d1mr}, {"D1mw", &EventCounts::d1mw},
    {"ILmr", &EventCounts::ilmr}, {"DLmr", &EventCounts::dlmr}, {"DLmw", &EventCounts::dlmw}};

constexpr const char* kTimedMeasure = "timed";
constexpr const char* kCountedMeasure = "counted";

OrderedJson samples_json(const std::vector<double>& values) {
  OrderedJson out = OrderedJson::array();
  for (const double x : values) out.push_back(x);
  return out;
}

OrderedJson counted_case_json(const EntryCase& c) {
  const EntryCountedCase& n = *c.counted;
  OrderedJson totals = OrderedJson::object();
  for (const auto& [key, field] : kEntryEvents) totals[key] = n.totals.*field;
  return {{"name", c.name},
          {"calls", n.calls},
          {"per_call", {{"estimated_cycles", n.estimated_cycles},
                        {"instructions", n.instructions},
                        {"l1_misses", n.l1_misses},
                        {"ll_misses", n.ll_misses}}},
          {"totals", std::move(totals)}};
}

// A counted case: something counted (calls and instructions), per-call values finite.
EntryCase read_counted_case(const EntryField& c) {
  EntryCase out;
  out.name = c.string("name");
  if (out.name.empty()) c.fail("\"name\" is empty");
  EntryCountedCase n;
  n.calls = c.count("calls");
  const EntryField totals = c.child("totals");
  for (const auto& [key, field] : kEntryEvents) n.totals.*field = static_cast<std::uint64_t>(totals.big_count(key));
  const EntryField per_call = c.child("per_call");
  n.estimated_cycles = per_call.number("estimated_cycles");
  n.instructions = per_call.number("instructions");
  n.l1_misses = per_call.number("l1_misses");
  n.ll_misses = per_call.number("ll_misses");
  if (n.calls < 1 || n.totals.ir == 0 || !(n.estimated_cycles > 0) || !(n.instructions > 0)) {
    c.fail("nothing was counted (no calls, instructions or estimated cycles)");
  }
  out.counted = n;
  return out;
}

EntryCase read_case(const EntryField& c) {
  EntryCase out;
  out.name = c.string("name");
  if (out.name.empty()) c.fail("\"name\" is empty");
  out.rate_unit = c.string("rate_unit");
  if (out.rate_unit != "GB/s" && out.rate_unit != "GFLOP/s" && !out.rate_unit.empty()) {
    c.fail(fmt::format("\"rate_unit\" '{}' is not GB/s, GFLOP/s or empty", out.rate_unit));
  }
  out.real_time_ns = c.samples("real_time_ns");
  out.rate = c.samples("rate");
  out.probe_rate = c.samples("probe_rate");
  out.limit_fraction = c.samples("limit_fraction");
  const std::size_t n = out.real_time_ns.size();
  if (n == 0) c.fail("\"real_time_ns\" is empty: a case without samples");
  // One sample per repetition in each series that is present.
  const auto same_count = [&](const std::vector<double>& v, const char* key, bool may_be_empty) {
    if (v.size() != n && !(may_be_empty && v.empty())) {
      c.fail(fmt::format("\"{}\" has {} samples, \"real_time_ns\" {}", key, v.size(), n));
    }
  };
  same_count(out.rate, "rate", out.rate_unit.empty());
  if (out.rate_unit.empty() && !out.rate.empty()) c.fail("\"rate\" without a \"rate_unit\"");
  same_count(out.probe_rate, "probe_rate", true);
  same_count(out.limit_fraction, "limit_fraction", true);
  return out;
}

}  // namespace

bool is_file_name_id(const std::string& text) {
  if (text.empty() || text.size() > 100 || text.front() == '.') return false;
  for (const char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string short_commit(const std::string& id) { return id.substr(0, 12); }

OrderedJson entry_to_json(const Entry& e) {
  OrderedJson j;
  j["schema"] = kEntrySchema;
  j["measure"] = e.is_counted() ? kCountedMeasure : kTimedMeasure;
  j["commit"] = {{"id", e.commit.id},
                 {"date", format_utc(e.commit.time)},
                 {"branch", e.commit.branch},
                 {"subject", e.commit.subject},
                 {"ancestors", e.commit.ancestors}};
  j["run"] = {{"date", format_utc(e.run.time)},
              {"host_name", e.run.host_name},
              {"digest", e.run.digest},
              {"recorded", format_utc(e.run.recorded)}};
  j["machine"] = {{"id", e.machine.id},
                  {"fingerprint", e.machine.fingerprint},
                  {"cpu_model", e.machine.cpu_model},
                  {"logical_cpus", e.machine.logical_cpus},
                  {"mhz_per_cpu", e.machine.mhz_per_cpu},
                  {"cpu_flags", e.machine.cpu_flags},
                  {"isa_levels", e.machine.isa_levels},
                  {"dispatched_isa", e.machine.dispatched_isa},
                  {"openblas_core", e.machine.openblas_core}};
  j["build"] = {{"ropecheck_version", e.build.ropecheck_version},
                {"ropecheck_commit", e.build.ropecheck_commit},
                {"compiler", e.build.compiler},
                {"cxx_flags", e.build.cxx_flags},
                {"build_type", e.build.build_type},
                {"openblas", e.build.openblas},
                {"benchmark_build_type", e.build.benchmark_build_type},
                {"openblas_threads", e.build.openblas_threads},
                {"plugin_threads", e.build.plugin_threads}};
  if (e.counted) {
    j["counted"] = {{"counted_isa", e.counted->counted_isa},
                    {"isa_note", e.counted->isa_note},
                    {"simulated_caches", e.counted->simulated_caches},
                    {"valgrind", e.counted->valgrind},
                    {"cycle_model", {{"l1_miss_cycles", e.counted->model.l1_miss_cycles},
                                     {"ll_miss_cycles", e.counted->model.ll_miss_cycles},
                                     {"formula", e.counted->model.formula()}}}};
  }
  OrderedJson cases = OrderedJson::array();
  for (const auto& c : e.cases) {
    if (c.counted) {
      cases.push_back(counted_case_json(c));
      continue;
    }
    cases.push_back({{"name", c.name},
                     {"rate_unit", c.rate_unit},
                     {"rate", samples_json(c.rate)},
                     {"probe_rate", samples_json(c.probe_rate)},
                     {"limit_fraction", samples_json(c.limit_fraction)},
                     {"real_time_ns", samples_json(c.real_time_ns)}});
  }
  j["cases"] = std::move(cases);
  return j;
}

Entry entry_from_json(const OrderedJson& json, const fs::path& file) {
  const EntryField doc(file, json, "");
  if (!json.is_object() || !json.contains("schema") || !json["schema"].is_string()) {
    doc.fail(fmt::format("not a history entry (no \"schema\": \"{}\"); a history holds only the "
                         "files `ropecheck history add` writes",
                         kEntrySchema));
  }
  const std::string schema = doc.string("schema");
  if (schema != kEntrySchema && schema != kEntrySchemaV1) {
    doc.fail(fmt::format("schema '{}', expected '{}' (or '{}')", schema, kEntrySchema, kEntrySchemaV1));
  }
  // /1 knew timed runs only; /2 says which.
  const std::string measure = schema == kEntrySchemaV1 ? kTimedMeasure : doc.string("measure");
  if (measure != kTimedMeasure && measure != kCountedMeasure) {
    doc.fail(fmt::format("\"measure\" '{}' is not '{}' or '{}'", measure, kTimedMeasure, kCountedMeasure));
  }
  Entry e;
  const EntryField commit = doc.child("commit");
  e.commit.id = commit.id("id");
  e.commit.time = commit.date("date");
  e.commit.branch = commit.string("branch");
  e.commit.subject = commit.string("subject");
  e.commit.ancestors = commit.big_count("ancestors");
  const EntryField run = doc.child("run");
  e.run.time = run.date("date");
  e.run.host_name = run.string("host_name");
  e.run.digest = run.id("digest");
  e.run.recorded = run.date("recorded");
  const EntryField machine = doc.child("machine");
  e.machine.id = machine.id("id");
  e.machine.fingerprint = machine.id("fingerprint");
  e.machine.cpu_model = machine.string("cpu_model");
  e.machine.logical_cpus = machine.count("logical_cpus");
  e.machine.mhz_per_cpu = machine.number("mhz_per_cpu");
  e.machine.cpu_flags = machine.strings("cpu_flags");
  e.machine.isa_levels = machine.strings("isa_levels");
  e.machine.dispatched_isa = machine.string("dispatched_isa");
  e.machine.openblas_core = machine.string("openblas_core");
  const EntryField build = doc.child("build");
  e.build.ropecheck_version = build.string("ropecheck_version");
  e.build.ropecheck_commit = build.string("ropecheck_commit");
  e.build.compiler = build.string("compiler");
  e.build.cxx_flags = build.string("cxx_flags");
  e.build.build_type = build.string("build_type");
  e.build.openblas = build.string("openblas");
  e.build.benchmark_build_type = build.string("benchmark_build_type");
  e.build.openblas_threads = build.count("openblas_threads");
  e.build.plugin_threads = build.count("plugin_threads");
  if (measure == kCountedMeasure) {
    const EntryField counted = doc.child("counted");
    EntryCounted facts;
    facts.counted_isa = counted.string("counted_isa");
    facts.isa_note = counted.string("isa_note");
    facts.simulated_caches = counted.string("simulated_caches");
    facts.valgrind = counted.string("valgrind");
    const EntryField model = counted.child("cycle_model");
    facts.model.l1_miss_cycles = model.number("l1_miss_cycles");
    facts.model.ll_miss_cycles = model.number("ll_miss_cycles");
    e.counted = std::move(facts);
  }
  const auto& cases = doc.get("cases");
  if (!cases.is_array() || cases.empty()) doc.fail("\"cases\" is not a non-empty array");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const EntryField c = doc.element("cases", i);
    e.cases.push_back(e.is_counted() ? read_counted_case(c) : read_case(c));
  }
  for (std::size_t i = 1; i < e.cases.size(); ++i) {
    for (std::size_t k = 0; k < i; ++k) {
      if (e.cases[k].name == e.cases[i].name) doc.fail(fmt::format("case '{}' appears twice", e.cases[i].name));
    }
  }
  return e;
}

Entry read_entry(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InvalidInput(fmt::format("{}: cannot read", file.string()));
  std::ostringstream text;
  text << in.rdbuf();
  OrderedJson json;
  try {
    json = OrderedJson::parse(text.str());
  } catch (const OrderedJson::parse_error& e) {
    throw InvalidInput(fmt::format("{}: not JSON (a truncated or foreign file?): {}", file.string(), e.what()));
  }
  return entry_from_json(json, file);
}

}  // namespace ropecheck::history
