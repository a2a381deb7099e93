// `ropecheck bench`: the benchmark suite (suite.h) with its same-run limits -> bench.json.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "core/result_files.h"
#include "plugins/host/plugin_host.h"

namespace ropecheck {

// The default thread sweep: 1, 2 and every logical CPU this process may run on, each once, in
// order (1 and 2 on a 2-core machine; 1, 2, 16 on 16).
std::vector<int> default_thread_counts();

struct BenchOptions {
  std::string filter;              // a regex over case names (Google Benchmark's filter)
  int repetitions = 5;             // per case; the CI gate needs about 10 (compare warns)
  double min_time = 0.05;          // seconds per repetition
  std::vector<int> threads = default_thread_counts();  // benchmark threads (kernels) and OpenBLAS threads
  std::vector<std::string> benchmark_flags;   // passed through: --benchmark_...
  // --plugin: timed beside the registry's, one thread (each call crosses to the plugin's worker
  // process through shared memory: the copies are part of what is timed).
  std::vector<std::filesystem::path> plugins;
  // Time implementations that fail their oracle check too (a peer that users run regardless):
  // each such case is labelled and counted oracle_failed = 1 in bench.json, its error printed once.
  bool time_failing = false;
  PluginOptions plugin_options;
  // > 0: count instead of time (bench/counted_region.h): the process must run under callgrind
  // with instrumentation off at start (`ropecheck count` and `gate --measure counted` start it
  // so), its filter must match one case, and its threads are 1.
  int counted_calls = 0;
  std::filesystem::path out_dir = kDefaultOutDir;
  // Under user-mode emulation (an aarch64 build under qemu-aarch64: core/machine_info.h) a timing
  // is the emulator's, not the machine's: bench refuses unless asked (--emulated-timings, or
  // ROPECHECK_EMULATED_TIMINGS=1), and then bench.json, the console and the report mark every
  // timing as emulated.
  bool emulated_timings = false;
  // Where Google Benchmark's header goes (date, CPU, caches, load, its warnings); null: stderr,
  // as Google Benchmark writes it. The main job keeps it out of its one-screen summary.
  std::ostream* context_out = nullptr;
};

// Runs the benchmark suite (each case verified before it is timed, with its same-run limit),
// prints the console output and the same-run table to `out`, writes out_dir/bench.json.
// Returns kExitOk, or kExitFailed when a case failed its check; InvalidInput for bad options.
int run_bench(const BenchOptions& options, std::ostream& out);

// Whether this process may time under emulation: the option, or ROPECHECK_EMULATED_TIMINGS=1.
bool emulated_timings_allowed(const BenchOptions& options);

}  // namespace ropecheck
