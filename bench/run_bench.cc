// `ropecheck bench`: runs the benchmark suite (bench/suite.h) with Google Benchmark in this
// process, prints Google Benchmark's console output and the same-run table, and writes
// DIR/bench.json (Google Benchmark's JSON, so its compare.py reads it too) with the context
// extended by the machine and build facts a result needs to be compared honestly.
//   ropecheck bench --filter 'kernel/avx512' --repetitions 10 --out reports/out/latest
#include <benchmark/benchmark.h>
#include <cblas.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "bench/counted_region.h"
#include "bench/run_bench.h"
#include "core/exit_codes.h"
#include "core/result_files.h"
#include "core/machine_info.h"
#include "plugins/host/plugin_subjects.h"
#include "core/blas_core.h"
#include "core/build_info.h"
#include "core/errors.h"
#include "core/isa.h"
#include "core/logging.h"
#include "impls/registry.h"
#include "bench/suite.h"

namespace ropecheck {
namespace {

void validate(const BenchOptions& o) {
  if (o.repetitions < 1) throw InvalidInput(fmt::format("--repetitions must be >= 1, got {}", o.repetitions));
  if (!(o.min_time > 0 && o.min_time <= 60)) {
    throw InvalidInput(fmt::format("--min-time must be in (0, 60] seconds, got {}", o.min_time));
  }
  if (o.threads.empty()) throw InvalidInput("--threads: at least one thread count");
  if (o.counted_calls < 0 || o.counted_calls > 100000) {
    throw InvalidInput(fmt::format("--counted-calls must be in [0, 100000], got {}", o.counted_calls));
  }
  if (o.counted_calls > 0) {
    if (!bench::running_on_valgrind()) {
      throw InvalidInput("--counted-calls counts under Valgrind's callgrind: run `ropecheck count` or "
                         "`ropecheck gate --measure counted`, which start it");
    }
    if (o.threads != std::vector<int>{1}) {
      throw InvalidInput("--counted-calls counts at one thread: give --threads 1");
    }
  }
  for (const int n : o.threads) {
    if (n < 1 || n > 256) throw InvalidInput(fmt::format("--threads: {} is not in [1, 256]", n));
  }
  // Only an aarch64 build runs emulated here (under qemu-aarch64 on an x86-64 host).
  if (build_architecture() != Architecture::aarch64 || emulated_timings_allowed(o)) return;
  if (const MachineInfo machine = this_machine(); !machine.emulated_on.empty()) {
    throw InvalidInput(fmt::format(
        "bench: this is {}: every timing would be the emulator's, not an aarch64 CPU's. Time on aarch64 "
        "hardware, or pass --emulated-timings (ROPECHECK_EMULATED_TIMINGS=1) to time anyway, every result "
        "marked emulated",
        machine.cpu_model));
  }
}

// The facts Google Benchmark's own context lacks: which CPU features and kernel level, which
// OpenBLAS, which build. Keys are prefixed so that they never collide with Google Benchmark's.
void add_context() {
  const MachineInfo machine = this_machine();
  std::string flags;
  for (const auto& [flag, present] : machine.flags) {
    if (present) flags += (flags.empty() ? "" : " ") + flag;
  }
  std::string levels;
  for (const Isa isa : built_levels()) {
    if (cpu_supports(isa)) levels += (levels.empty() ? "" : " ") + std::string(to_string(isa));
  }
  benchmark::AddCustomContext("ropecheck_cpu_model", machine.cpu_model);
  if (!machine.emulated_on.empty()) benchmark::AddCustomContext("ropecheck_emulated_on", machine.emulated_on);
  if (const int sve_bits = sve_vector_bits(); sve_bits > 0) {
    benchmark::AddCustomContext("ropecheck_sve_vector_bits", std::to_string(sve_bits));
  }
  benchmark::AddCustomContext("ropecheck_cpu_flags", flags);
  benchmark::AddCustomContext("ropecheck_isa_levels", levels);
  benchmark::AddCustomContext("ropecheck_dispatched_isa", std::string(to_string(dispatched_isa())));
  benchmark::AddCustomContext("ropecheck_openblas_config", openblas_get_config());
  benchmark::AddCustomContext("ropecheck_openblas_core", openblas_get_corename());
  // Where ropecheck set the core for the kernels' level (core/blas_core.h), what OpenBLAS chose.
  if (const char* detected = std::getenv(kOpenBlasDetectedCoreVariable)) {
    benchmark::AddCustomContext("ropecheck_openblas_core_detected", detected);
  }
  benchmark::AddCustomContext("ropecheck_openblas_threads", std::to_string(openblas_get_num_threads()));
  benchmark::AddCustomContext("ropecheck_version", build_info::kVersion);
  benchmark::AddCustomContext("ropecheck_git_commit", build_info::kGitCommit);
  benchmark::AddCustomContext("ropecheck_compiler", build_info::kCompiler);
  benchmark::AddCustomContext("ropecheck_cxx_flags", build_info::kCxxFlags);
  benchmark::AddCustomContext("ropecheck_build_type", build_info::kBuildType);
  benchmark::AddCustomContext("ropecheck_sanitized", build_info::kSanitized ? "true" : "false");
}

}  // namespace

bool emulated_timings_allowed(const BenchOptions& options) {
  const char* env = std::getenv("ROPECHECK_EMULATED_TIMINGS");
  return options.emulated_timings || (env != nullptr && std::string_view(env) == "1");
}

std::vector<int> default_thread_counts() {
  std::vector<int> counts = {1, 2, std::clamp(usable_cpus(), 1, 256)};
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

int run_bench(const BenchOptions& options, std::ostream& out) {
  validate(options);
  std::error_code error;
  std::filesystem::create_directories(options.out_dir, error);
  if (error || !std::filesystem::is_directory(options.out_dir)) {
    throw InvalidInput(fmt::format("--out {}: cannot create the directory ({})",
                                   options.out_dir.string(), error.message()));
  }
  const auto json = options.out_dir / "bench.json";
  // Counted: one repetition, and the shortest Google Benchmark loop (its iteration estimate may
  // enter the case again, which counts nothing more: counted_region.h).
  const bool counted = options.counted_calls > 0;
  std::vector<std::string> args = {
      "ropecheck bench",
      fmt::format("--benchmark_repetitions={}", counted ? 1 : options.repetitions),
      fmt::format("--benchmark_min_time={}", counted ? 1e-9 : options.min_time),
      fmt::format("--benchmark_out={}", json.string()),
      "--benchmark_out_format=json",
  };
  // Every flag this run depends on is passed, its default too: Google Benchmark keeps flags in
  // globals, so a flag an earlier run in this process set would otherwise still hold.
  args.push_back("--benchmark_filter=" + (options.filter.empty() ? std::string(".") : options.filter));
  args.push_back(fmt::format("--benchmark_display_aggregates_only={}", options.repetitions > 1));
  args.insert(args.end(), options.benchmark_flags.begin(), options.benchmark_flags.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  benchmark::Initialize(&argc, argv.data());
  if (argc > 1) throw InvalidInput(fmt::format("bench: unrecognized benchmark flag '{}'", argv[1]));

  benchmark::ClearRegisteredBenchmarks();  // a second run in one process starts clean
  add_context();
  std::vector<const RopeImpl*> impls(rope_implementations().begin(), rope_implementations().end());
  // Plugin cases are timed in their worker, one request in flight (bench/rope_cases.cc). An ABI 2
  // plugin is told its threads in every call; ABI 1 carries no thread count, so a plugin that can use threads of its own
  // (the PyTorch peers, peers/torch: torch's intra-op pool and OpenBLAS) is told to use one
  // through ROPECHECK_PLUGIN_THREADS, set here before load_plugins forks the workers that inherit
  // it: a peer and a kernel at threads:1 then each have one core.
  setenv("ROPECHECK_PLUGIN_THREADS", "1", 1);
  benchmark::AddCustomContext("ropecheck_plugin_threads", "1");
  // An ABI 2 plugin is timed at each --threads count as its call's (bench/rope_cases.cc): its
  // worker is told the largest at init (a thread pool's size), unless --plugin-threads says more.
  PluginOptions plugin_options = options.plugin_options;
  for (const int n : options.threads) plugin_options.threads = std::max(plugin_options.threads, n);
  const LoadedPlugins plugins = load_plugins(options.plugins, plugin_options);
  for (const auto& plugin : plugins.rope) impls.push_back(plugin.get());
  // Attention plugins run here, at each case's team size, as attention_blas does.
  std::vector<const AttentionImpl*> attention_peers;
  for (const auto& plugin : plugins.attention) attention_peers.push_back(plugin.get());
  // Fused RoPE + KV-cache peers (ABI 5 plugins, Python fused functions) beside the own fused kernels.
  std::vector<const RopeCacheImpl*> rope_cache_peers;
  for (const auto& plugin : plugins.rope_cache) rope_cache_peers.push_back(plugin.get());
  // Call-form peers (ABI 6 plugins, Python call forms) beside the own fused QK-norm + RoPE kernels.
  std::vector<const RopeFormImpl*> rope_form_peers;
  for (const auto& plugin : plugins.rope_form) rope_form_peers.push_back(plugin.get());
  bench::Suite suite;
  suite.rope.time_failing = options.time_failing;
  // The registered cases point into `suite`: unregister them however this returns, so that
  // nothing in this process can run them once the suite is gone (a test process runs several).
  struct Unregister {
    ~Unregister() {
      benchmark::ClearRegisteredBenchmarks();
      bench::set_counted_calls(0);
    }
  } unregister;
  bench::set_counted_calls(options.counted_calls);
  const auto table = bench::register_suite(suite, impls, options.threads, attention_peers, rope_cache_peers,
                                           rope_form_peers);
  if (!suite.left_out.empty()) {
    progress_log().info("bench: {}", suite.left_out.summary());
    suite.left_out.write_each(out);
  }

  // Google Benchmark writes its console output to std::cout; route it to `out`.
  bench::RatioReporter reporter(isatty(STDOUT_FILENO) && &out == &std::cout
                                    ? benchmark::ConsoleReporter::OO_Color
                                    : benchmark::ConsoleReporter::OO_None);
  reporter.SetOutputStream(&out);
  if (options.context_out != nullptr) reporter.SetErrorStream(options.context_out);
  const std::size_t ran = benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.SetErrorStream(&std::cerr);  // a case's FAILED line below stays where errors go
  if (ran == 0) {
    throw InvalidInput(fmt::format("bench: no benchmark matches --filter '{}'", options.filter));
  }
  if (counted && ran != 1) {
    throw InvalidInput(fmt::format("bench: --counted-calls counts one case per process, and --filter "
                                   "'{}' matched {}", options.filter, ran));
  }
  const int status = reporter.print_table(table);
  // Each case timed despite its failed check (--time-failing), with the element that failed: once.
  for (const bench::RopeCase& c : suite.rope.cases) {
    if (c.time_failing && !c.error.empty()) {
      out << fmt::format("ORACLE FAILED (timed with --time-failing) {} on {} ({}{}): {}\n", c.impl->id(),
                         c.workload->shape.name, to_string(c.spec.layout),
                         c.spec.pass == Pass::backward ? ", backward" : "", c.error);
    }
  }
  for (const bench::AttentionCase& c : suite.attention) {
    if (c.peer != nullptr && c.time_failing && !c.error.empty()) {
      out << fmt::format("CHECK FAILED (timed with --time-failing) {}\n", c.error);
    }
  }
  out << fmt::format("\nbench.json: {}\n", json.string());
  return status == 0 ? kExitOk : kExitFailed;
}

}  // namespace ropecheck
