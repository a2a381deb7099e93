// read_bench_json(): Google Benchmark JSON -> BenchCase per run_name, checked field by field so
// that a broken or foreign file is bad input with a message, never a wrong verdict.
// See bench_json.h; tested by tests/gate/compare_test.cc.
#include "bench/format/bench_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/errors.h"

namespace ropecheck {
namespace {

using Json = nlohmann::json;

// Fields Google Benchmark writes for every run; everything else numeric is a user counter.
const std::set<std::string> kStandardFields = {
    "name",       "family_index", "per_family_instance_index", "run_name", "run_type",
    "repetitions", "repetition_index", "threads", "iterations", "real_time", "cpu_time",
    "time_unit",  "label",        "error_occurred", "error_message", "aggregate_name",
    "aggregate_unit", "limit_fraction"};

struct Sample {
  double index = 0;  // repetition_index, or the file order where the field is absent
  double real_time_ns = 0, cpu_time_ns = 0;
  std::optional<double> limit_fraction;
  std::map<std::string, double> counters;
};

class EntryReader {
 public:
  EntryReader(const std::filesystem::path& file, const Json& entry, std::size_t position)
      : file_(file), entry_(entry), position_(position) {}

  [[noreturn]] void fail(const std::string& problem) const {
    const auto name = entry_.find("name");
    const std::string who = name != entry_.end() && name->is_string()
                                ? fmt::format("benchmark '{}'", name->get<std::string>())
                                : fmt::format("benchmarks[{}]", position_);
    throw InvalidInput(fmt::format("{}: {}: {}", file_.string(), who, problem));
  }

  std::string string(const char* key) const {
    const auto it = entry_.find(key);
    if (it == entry_.end()) fail(fmt::format("no \"{}\"", key));
    if (!it->is_string()) fail(fmt::format("\"{}\" is not a string", key));
    return it->get<std::string>();
  }
  std::string string_or(const char* key, const std::string& fallback) const {
    return entry_.contains(key) ? string(key) : fallback;
  }
  double number(const char* key) const {
    const auto it = entry_.find(key);
    if (it == entry_.end()) fail(fmt::format("no \"{}\"", key));
    if (!it->is_number()) fail(fmt::format("\"{}\" is not a number", key));
    const double value = it->get<double>();
    if (!std::isfinite(value)) fail(fmt::format("\"{}\" is not finite", key));
    return value;
  }
  double positive(const char* key) const {
    const double value = number(key);
    if (!(value > 0)) fail(fmt::format("\"{}\" is {}, not positive", key, value));
    return value;
  }

 private:
  const std::filesystem::path& file_;
  const Json& entry_;
  std::size_t position_;
};

double ns_per_unit(const EntryReader& entry, const std::string& unit) {
  if (unit == "ns") return 1;
  if (unit == "us") return 1e3;
  if (unit == "ms") return 1e6;
  if (unit == "s") return 1e9;
  entry.fail(fmt::format("unknown \"time_unit\" '{}' (ns, us, ms or s)", unit));
}

Json parse_file(const std::filesystem::path& file) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error)) {
    throw InvalidInput(fmt::format("{}: no such file (a bench.json, or a directory holding one)",
                                   file.string()));
  }
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) throw InvalidInput(fmt::format("{}: cannot read", file.string()));
  try {
    return Json::parse(text.str());
  } catch (const Json::parse_error& e) {
    throw InvalidInput(fmt::format("{}: not JSON: {}", file.string(), e.what()));
  }
}

BenchCase finish_case(const std::filesystem::path& file, std::string name,
                      std::vector<Sample> samples, std::size_t min_repetitions) {
  std::sort(samples.begin(), samples.end(),
            [](const Sample& a, const Sample& b) { return a.index < b.index; });
  for (std::size_t i = 1; i < samples.size(); ++i) {
    if (samples[i].index == samples[i - 1].index) {
      throw InvalidInput(fmt::format("{}: case '{}': repetition_index {} appears twice",
                                     file.string(), name, samples[i].index));
    }
  }
  if (samples.size() < min_repetitions) {
    throw InvalidInput(fmt::format(
        "{}: case '{}' has {} repetition(s), fewer than the {} needed "
        "(run the benchmark with --benchmark_repetitions={} or more)",
        file.string(), name, samples.size(), min_repetitions, min_repetitions));
  }
  const auto with_fraction = std::count_if(samples.begin(), samples.end(), [](const Sample& s) {
    return s.limit_fraction.has_value();
  });
  if (with_fraction != 0 && static_cast<std::size_t>(with_fraction) != samples.size()) {
    throw InvalidInput(fmt::format("{}: case '{}': limit_fraction on {} of {} repetitions",
                                   file.string(), name, with_fraction, samples.size()));
  }
  BenchCase c;
  c.name = std::move(name);
  std::map<std::string, std::vector<double>> counters;
  for (const Sample& s : samples) {
    c.real_time_ns.push_back(s.real_time_ns);
    c.cpu_time_ns.push_back(s.cpu_time_ns);
    if (s.limit_fraction) c.limit_fraction.push_back(*s.limit_fraction);
    for (const auto& [key, value] : s.counters) counters[key].push_back(value);
  }
  // A counter missing from some repetition cannot be lined up with the others: left out.
  for (auto& [key, values] : counters) {
    if (values.size() == samples.size()) c.counters.emplace(key, std::move(values));
  }
  return c;
}

}  // namespace

std::filesystem::path bench_json_path(const std::filesystem::path& path) {
  std::error_code error;
  return std::filesystem::is_directory(path, error) ? path / "bench.json" : path;
}

std::map<std::string, BenchCase> read_bench_json(const std::filesystem::path& path,
                                                 std::size_t min_repetitions) {
  const auto file = bench_json_path(path);
  const Json doc = parse_file(file);
  if (!doc.is_object() || !doc.contains("benchmarks") || !doc["benchmarks"].is_array()) {
    throw InvalidInput(fmt::format(
        "{}: not Google Benchmark JSON: no \"benchmarks\" array "
        "(write it with --benchmark_out_format=json)",
        file.string()));
  }
  // The gate and compare judge a machine's speed: an emulator's is not one (bench/run_bench.h).
  if (doc.contains("context") && doc["context"].is_object() && doc["context"].contains("ropecheck_emulated_on")) {
    throw InvalidInput(fmt::format("{}: timed under emulation on {}: its timings are the emulator's, not the "
                                   "machine's, and no speed can be judged from them",
                                   file.string(), doc["context"]["ropecheck_emulated_on"].dump()));
  }
  std::map<std::string, std::vector<Sample>> by_case;
  const Json& entries = doc["benchmarks"];
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const Json& e = entries[i];
    if (!e.is_object()) {
      throw InvalidInput(fmt::format("{}: benchmarks[{}] is not an object", file.string(), i));
    }
    const EntryReader entry(file, e, i);
    const std::string name = entry.string("name");
    // Aggregates summarise the samples read here; the gate does its own statistics.
    if (entry.string_or("run_type", "iteration") != "iteration") continue;
    if (e.contains("error_occurred") && e["error_occurred"] == true) {
      entry.fail(fmt::format("the benchmark reported an error: {}",
                             entry.string_or("error_message", "(no message)")));
    }
    auto& samples = by_case[entry.string_or("run_name", name)];
    Sample s;
    s.index = e.contains("repetition_index") ? entry.number("repetition_index")
                                             : static_cast<double>(samples.size());
    const double scale = ns_per_unit(entry, entry.string_or("time_unit", "ns"));
    s.real_time_ns = entry.positive("real_time") * scale;
    s.cpu_time_ns = entry.number("cpu_time") * scale;
    if (e.contains("limit_fraction")) s.limit_fraction = entry.positive("limit_fraction");
    for (const auto& [key, value] : e.items()) {
      if (value.is_number() && !kStandardFields.contains(key)) {
        s.counters[key] = value.get<double>();
      }
    }
    samples.push_back(std::move(s));
  }
  std::map<std::string, BenchCase> cases;
  for (auto& [name, samples] : by_case) {
    cases.emplace(name, finish_case(file, name, std::move(samples), min_repetitions));
  }
  return cases;
}

}  // namespace ropecheck
