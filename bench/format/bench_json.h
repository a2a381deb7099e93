// Reading Google Benchmark's JSON output (`--benchmark_out_format=json`, what `ropecheck bench`
// writes as bench.json) into per-repetition samples per case, for `ropecheck compare` and reports.
//   auto cases = read_bench_json("reports/out/latest");  // a bench.json or a directory holding one
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace ropecheck {

// Probe entries ("probe/..."): the machine-limit measurements the cases are divided by.
inline constexpr const char* kProbePrefix = "probe/";

// One benchmark case (a Google Benchmark "run_name") with its samples, one per repetition, in
// repetition_index order. Aggregates (mean, median, stddev, cv) are not read: the samples are.
struct BenchCase {
  // run_name, e.g. "kernel/avx512/llama7b_prefill512/interleaved/real_time/threads:1".
  std::string name;
  // Throughput as a fraction of the same repetition's machine-limit probe (higher is better);
  // empty when the case has no such counter (a probe, or a bench without the counter).
  std::vector<double> limit_fraction;
  std::vector<double> real_time_ns;  // wall time per iteration, converted from time_unit
  std::vector<double> cpu_time_ns;
  // Every other numeric field of each repetition (user counters such as bytes_per_second,
  // flops), by name; a vector only when every repetition has the field.
  std::map<std::string, std::vector<double>> counters;

  bool is_probe() const { return name.rfind(kProbePrefix, 0) == 0; }
  std::size_t repetitions() const { return real_time_ns.size(); }
};

// `path` itself, or path/bench.json when `path` is a directory.
std::filesystem::path bench_json_path(const std::filesystem::path& path);

// Reads bench.json (see bench_json_path) into its cases by run_name. Throws InvalidInput naming
// the file and the problem: missing or unreadable, not JSON, no "benchmarks" array, a field of
// the wrong type, a non-positive time or limit_fraction, an errored benchmark, limit_fraction on
// some repetitions of a case only, a repeated repetition_index, or a case with fewer than
// `min_repetitions` repetitions.
std::map<std::string, BenchCase> read_bench_json(const std::filesystem::path& path,
                                                 std::size_t min_repetitions = 1);

}  // namespace ropecheck
