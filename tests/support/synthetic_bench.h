// Synthetic `ropecheck bench` runs for the history tests: a bench.json with the context a real run
// records and, per case, repetitions around a chosen same-run fraction and rate, so that a test
// can build a history with a known step at a known commit among noisy runs.
//   write_synthetic_run(dir / "run", {.date = "2026-11-01T10:00:00Z", .cases = {{"kernel/...", 0.8, 20}}});
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace ropecheck::test {

struct SyntheticCase {
  std::string name;  // a run_name
  double fraction = 0.8;  // limit_fraction of this run (the process); repetitions scatter around it
  double rate = 20;       // GB/s
};

struct SyntheticRun {
  std::string date = "2026-11-01T10:00:00+00:00";  // Google Benchmark's context date
  std::string cpu_model = "Synthetic CPU @ 3.0GHz";
  int cpus = 2;
  std::string dispatched_isa = "avx512";
  std::string sanitized = "false";
  std::string compiler = "GNU 12.2.0";
  std::vector<SyntheticCase> cases;
  int repetitions = 3;
  double repetition_cv = 0.005;  // inside a process repetitions agree to about 1% (bench/README.md)
  std::uint64_t seed = 1;
};

inline nlohmann::json synthetic_bench_json(const SyntheticRun& run) {
  nlohmann::json doc;
  doc["context"] = {{"date", run.date},
                    {"host_name", "synthetic"},
                    {"executable", "ropecheck bench"},
                    {"num_cpus", run.cpus},
                    {"mhz_per_cpu", 3000},
                    {"library_build_type", "release"},
                    {"ropecheck_build_type", "RelWithDebInfo"},
                    {"ropecheck_compiler", run.compiler},
                    {"ropecheck_cpu_flags", "avx2 avx512f avx512bw avx512vl"},
                    {"ropecheck_cpu_model", run.cpu_model},
                    {"ropecheck_cxx_flags", "-O2 -g1 -DNDEBUG"},
                    {"ropecheck_dispatched_isa", run.dispatched_isa},
                    {"ropecheck_git_commit", "unknown"},
                    {"ropecheck_isa_levels", "scalar avx2 avx512"},
                    {"ropecheck_openblas_config", "OpenBLAS 0.3.21 DYNAMIC_ARCH"},
                    {"ropecheck_openblas_core", "SkylakeX"},
                    {"ropecheck_openblas_threads", "2"},
                    {"ropecheck_plugin_threads", "1"},
                    {"ropecheck_sanitized", run.sanitized},
                    {"ropecheck_version", "0.1.0"}};
  std::mt19937_64 rng(run.seed);
  std::normal_distribution<double> noise(0, run.repetition_cv);
  doc["benchmarks"] = nlohmann::json::array();
  for (const auto& c : run.cases) {
    for (int r = 0; r < run.repetitions; ++r) {
      const double scale = 1 + noise(rng);
      const double fraction = c.fraction * scale, rate = c.rate * scale;
      const double bytes = 1e6;  // per call
      doc["benchmarks"].push_back({{"name", c.name},
                                   {"run_name", c.name},
                                   {"run_type", "iteration"},
                                   {"repetitions", run.repetitions},
                                   {"repetition_index", r},
                                   {"threads", 1},
                                   {"iterations", 100},
                                   {"real_time", bytes / (rate * 1e9) * 1e9},
                                   {"cpu_time", bytes / (rate * 1e9) * 1e9},
                                   {"time_unit", "ns"},
                                   {"bytes_per_second", rate * 1e9},
                                   {"limit_fraction", fraction},
                                   {"probe_rate", rate * 1e9 / fraction}});
    }
  }
  return doc;
}

// Writes dir/bench.json (creating dir) and returns dir.
inline std::filesystem::path write_synthetic_run(const std::filesystem::path& dir, const SyntheticRun& run) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "bench.json") << synthetic_bench_json(run).dump(1);
  return dir;
}

}  // namespace ropecheck::test
