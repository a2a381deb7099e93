// entry_from_run() (entry_from_run.h): bench.json read by the report's reader (reports/data.h:
// every sample checked), its context mapped onto the entry's fields, and the entry read back by
// the history's own reader before it is returned.
#include "history/entry_from_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <sstream>

#include "bench/format/bench_json.h"
#include "core/errors.h"
#include "history/iso_time.h"
#include "history/machine_id.h"
#include "reports/bench_tables.h"
#include "reports/data.h"

namespace ropecheck::history {
namespace {

namespace fs = std::filesystem;

class RunContext {
 public:
  explicit RunContext(const BenchData& bench) : bench_(bench) {}

  std::string optional(const char* key) const {
    const auto it = bench_.context.find(key);
    return it == bench_.context.end() ? "" : it->second;
  }
  std::string required(const char* key) const {
    const auto it = bench_.context.find(key);
    if (it == bench_.context.end()) {
      throw InvalidInput(fmt::format(
          "{}: not a ropecheck bench run: its context has no \"{}\" (write it with `ropecheck "
          "bench --out DIR` or the main job)",
          bench_.file.string(), key));
    }
    return it->second;
  }
  int integer(const char* key) const {
    const std::string text = optional(key);
    int value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    return error == std::errc() && end == text.data() + text.size() && value > 0 ? value : 0;
  }
  double real(const char* key) const {
    const std::string text = optional(key);
    try {
      std::size_t used = 0;
      const double value = std::stod(text, &used);
      return used == text.size() && value > 0 ? value : 0;
    } catch (const std::exception&) {
      return 0;
    }
  }
  std::vector<std::string> words(const char* key) const {
    std::istringstream in(optional(key));
    std::vector<std::string> out;
    for (std::string w; in >> w;) out.push_back(w);
    return out;
  }

 private:
  const BenchData& bench_;
};

std::vector<double> scaled(const std::vector<double>& values, double scale) {
  std::vector<double> out;
  for (const double v : values) out.push_back(v / scale);
  return out;
}

EntryCase entry_case(const BenchCase& c) {
  EntryCase out;
  out.name = c.name;
  out.real_time_ns = c.real_time_ns;
  out.limit_fraction = c.limit_fraction;
  // The unit by the report's rule (reports/bench_tables.h): bytes for RoPE and tables, flops for
  // attention; each repetition's own counter, not the median.
  out.rate_unit = case_rate(c).unit;
  const char* counter = out.rate_unit == "GB/s" ? "bytes_per_second" : "flops";
  if (!out.rate_unit.empty()) {
    if (const auto it = c.counters.find(counter); it != c.counters.end()) out.rate = scaled(it->second, 1e9);
    if (const auto it = c.counters.find("probe_rate"); it != c.counters.end()) {
      out.probe_rate = scaled(it->second, 1e9);
    }
  }
  return out;
}

bool counted_case(const BenchCase& c) { return c.counters.contains("counted_calls"); }

}  // namespace

bool written_while_counting(const fs::path& run) {
  try {
    const auto cases = read_bench_json(bench_json_path(run));
    return std::any_of(cases.begin(), cases.end(), [](const auto& c) { return counted_case(c.second); });
  } catch (const InvalidInput&) {
    return false;
  }
}

Entry entry_from_run(const fs::path& run, const CommitFacts& commit, const std::string& machine_name,
                     std::int64_t now) {
  const fs::path file = bench_json_path(run);
  std::error_code error;
  if (!fs::is_regular_file(file, error)) {
    throw InvalidInput(fmt::format("{}: no bench.json there (RUN_DIR: a `ropecheck bench --out` or "
                                   "main job directory, or its bench.json)",
                                   run.string()));
  }
  const BenchData bench = read_bench_data(file);
  const RunContext context(bench);
  if (const auto it = bench.context.find("ropecheck_emulated_on"); it != bench.context.end()) {
    throw InvalidInput(fmt::format(
        "{}: timed under emulation on {}: its timings are the emulator's, and a history keeps only runs "
        "whose timings are the machine's",
        file.string(), it->second));
  }
  if (context.required("ropecheck_sanitized") == "true") {
    throw InvalidInput(fmt::format(
        "{}: built with ASan+UBSan: its timings are not representative, and a history keeps "
        "only runs whose timings are",
        file.string()));
  }
  for (const auto& name : bench.order) {
    if (counted_case(bench.cases.at(name))) {
      throw InvalidInput(fmt::format("{}: written by a counted bench process under callgrind: its times are "
                                     "Valgrind's; record the run's counted.json instead",
                                     file.string()));
    }
  }
  Entry e;
  e.commit.id = commit.id;
  e.commit.time = commit.time;
  e.commit.branch = commit.branch;
  e.commit.subject = commit.subject;
  e.commit.ancestors = commit.ancestors;
  const std::string date = context.required("date");
  const auto run_time = parse_iso8601(date);
  if (!run_time) {
    throw InvalidInput(fmt::format("{}: context \"date\" '{}' is not an ISO 8601 date-time", file.string(), date));
  }
  e.run.time = *run_time;
  e.run.host_name = context.optional("host_name");
  e.run.recorded = now;
  e.machine.cpu_model = context.required("ropecheck_cpu_model");
  e.machine.logical_cpus = context.integer("num_cpus");
  e.machine.mhz_per_cpu = context.real("mhz_per_cpu");
  e.machine.cpu_flags = context.words("ropecheck_cpu_flags");
  e.machine.isa_levels = context.words("ropecheck_isa_levels");
  e.machine.dispatched_isa = context.required("ropecheck_dispatched_isa");
  e.machine.openblas_core = context.optional("ropecheck_openblas_core");
  e.machine.fingerprint = machine_fingerprint(e.machine);
  e.machine.id = machine_id(e.machine, machine_name);
  e.build.ropecheck_version = context.optional("ropecheck_version");
  e.build.ropecheck_commit = context.optional("ropecheck_git_commit");
  e.build.compiler = context.required("ropecheck_compiler");
  e.build.cxx_flags = context.optional("ropecheck_cxx_flags");
  e.build.build_type = context.required("ropecheck_build_type");
  e.build.openblas = context.optional("ropecheck_openblas_config");
  e.build.benchmark_build_type = context.optional("library_build_type");
  e.build.openblas_threads = context.integer("ropecheck_openblas_threads");
  e.build.plugin_threads = context.integer("ropecheck_plugin_threads");
  for (const auto& name : bench.order) {
    const BenchCase& c = bench.cases.at(name);
    if (!c.is_probe()) e.cases.push_back(entry_case(c));
  }
  if (e.cases.empty()) throw InvalidInput(fmt::format("{}: no benchmark case to record", file.string()));
  // The digest names the run whatever commit it is given: its date, host and every sample.
  nlohmann::ordered_json identity = entry_to_json(e)["cases"];
  identity.push_back(format_utc(e.run.time));
  identity.push_back(e.run.host_name);
  e.run.digest = fnv1a_hex(identity.dump());
  // What a history report will read back, checked by the same reader now, before anything is
  // written (a zero rate counter, say, would otherwise make a file the report refuses).
  return entry_from_json(entry_to_json(e), file);
}

}  // namespace ropecheck::history
