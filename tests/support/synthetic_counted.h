// Synthetic counted runs for the history and report tests: a counted.json as `ropecheck count`
// writes it (bench/format/counted_json.h), each case's events scaled by a factor, so that a test
// can build a history with a known step in estimated cycles at a known commit.
//   write_counted_run(dir / "run", synthetic_counted_run("2026-10-01T10:00:00Z", {{"kernel/...", 1.02}}));
#pragma once

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "bench/format/counted_json.h"

namespace ropecheck::test {

// A case and the factor its events are scaled by (1: the base counts).
using CountedScale = std::pair<std::string, double>;

inline std::uint64_t scaled_count(std::uint64_t base, double factor) {
  return static_cast<std::uint64_t>(std::llround(static_cast<double>(base) * factor));
}

inline CountedRun synthetic_counted_run(const std::string& started, const std::vector<CountedScale>& cases,
                                        const std::string& host_cpu = "Synthetic host CPU") {
  CountedRun run;
  run.started = started;
  run.cpu_model = host_cpu;
  run.valgrind = "valgrind-3.19.0";
  run.simulated_caches = "I1 32 KiB 8-way, D1 32 KiB 8-way, LL 8 MiB 16-way";
  run.counted_isa = "avx2";
  run.isa_note = "Valgrind runs no AVX-512";
  run.model = {8, 60};
  run.ropecheck_commit = "unknown";
  for (std::size_t k = 0; k < cases.size(); ++k) {
    CountedCase c;
    c.name = cases[k].first;
    c.calls = 10;
    const double f = cases[k].second;
    const std::uint64_t base = 4'000'000 * (k + 1);
    // Everything scales with the factor: the estimated cycles change by exactly it.
    c.totals = {scaled_count(base, f),          scaled_count(base / 3, f),     scaled_count(base / 8, f),
                scaled_count(400, f),           scaled_count(30'000, f),       scaled_count(6'000, f),
                scaled_count(200, f),           scaled_count(2'000, f),        scaled_count(800, f)};
    c.estimated_cycles = run.model.estimate(c.totals) / c.calls;
    run.cases.push_back(std::move(c));
  }
  return run;
}

// Writes dir/counted.json; returns dir.
inline std::filesystem::path write_counted_run(const std::filesystem::path& dir, const CountedRun& run) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir / kCountedFileName) << counted_run_json(run).dump(2);
  return dir;
}

}  // namespace ropecheck::test
