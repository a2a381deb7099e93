// run_main_job(): what `ropecheck` with no arguments does, into reports/out/latest:
//   1. verify every implementation and mutant (verify.json),
//   2. the accuracy sweeps the report plots (accuracy.json),
//   3. a short benchmark: the kernel levels, references and attention on a few model shapes,
//      one thread, 3 repetitions (bench.json; `ropecheck bench` runs the whole suite),
//   4. the report of all three (report.md, report.html, plots/),
// then prints where the report is and a three-line summary. Exit 1 when verify failed (or a
// benchmarked implementation failed its check before it was timed).
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <ostream>

#include <nlohmann/json.hpp>

#include "accuracy.h"
#include "bench_json.h"
#include "commands.h"
#include "logging.h"
#include "verify_json.h"

namespace ropecheck {
namespace {

// The short benchmark's cases: enough for the report's plots, a minute or two on 2 cores.
constexpr const char* kShortBenchFilter =
    "^(kernel/(scalar|avx2|avx512)/(gpt2_small_prefill512|llama7b_prefill512|llama7b_prefill4096|"
    "llama7b_decode_at4095)/interleaved"
    "|kernel_bf16/(avx512|avx512bf16)/llama7b_prefill512/interleaved"
    "|(complex_multiply|rotate_half)/scalar/(llama7b_prefill512|llama7b_decode_at4095)/interleaved"
    "|sinusoidal/"
    "|attention_blas/.*/head_dim:128/)";

std::string verify_line(const std::filesystem::path& dir) {
  std::ifstream in(dir / "verify.json");
  const auto json = nlohmann::json::parse(in, nullptr, false);
  if (json.is_discarded() || !json.contains("results")) return "verify: no verify.json";
  int passed = 0, failed = 0, skipped = 0;
  for (const auto& r : json["results"]) {
    if (r["mutant"].get<bool>()) continue;
    const auto status = r["status"].get<std::string>();
    passed += status == "PASSED";
    failed += status == "FAILED";
    skipped += status == "SKIPPED";
  }
  const auto& summary = json["summary"];
  const int killed = summary.value("mutants_killed", 0);
  return fmt::format("verify: {} passed, {} failed, {} skipped; {} of {} mutants killed", passed,
                     failed, skipped, killed, killed + summary.value("mutants_survived", 0));
}

// The headline cases, as fractions of their same-run limits.
std::string bench_line(const std::filesystem::path& dir) {
  const auto cases = read_bench_json(dir);
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  std::string line = fmt::format("bench: {} cases", cases.size());
  for (const char* name : {"kernel/avx512/llama7b_prefill4096/interleaved/real_time/threads:1",
                           "attention_blas/causal_8heads/tokens:2048/head_dim:128/blas_threads:1/real_time"}) {
    const auto it = cases.find(name);
    if (it != cases.end()) {
      line += fmt::format("; {}: {:.2f} of its same-run limit", name, median(it->second.limit_fraction));
    }
  }
  return line;
}

}  // namespace

int run_main_job(std::ostream& out, std::vector<std::string> command_line) {
  const std::filesystem::path dir = kDefaultOutDir;
  progress_log().info("main job 1/4: verify --mutants --out {}", dir.string());
  VerifyOptions verify;
  verify.mutants = true;
  verify.out_dir = dir;
  verify.command_line = std::move(command_line);
  const int verdict = run_verify(verify, out);

  progress_log().info("main job 2/4: accuracy sweeps -> {}", (dir / "accuracy.json").string());
  write_json_file(accuracy_json(), dir / "accuracy.json");

  progress_log().info("main job 3/4: short benchmark -> {} (`ropecheck bench` runs the whole suite)",
                      (dir / "bench.json").string());
  BenchOptions bench;
  bench.filter = kShortBenchFilter;
  bench.repetitions = 3;
  bench.min_time = 0.03;
  bench.threads = {1};
  bench.out_dir = dir;
  const int bench_status = run_bench(bench, out);

  progress_log().info("main job 4/4: report -> {}", (dir / "report.html").string());
  ReportOptions report;
  report.in_dir = dir;
  report.out_dir = dir;
  run_report(report, out);

  out << fmt::format("\nReport: {} (and report.md; data: verify.json, accuracy.json, bench.json)\n",
                     (dir / "report.html").string());
  out << verify_line(dir) << '\n' << bench_line(dir) << '\n';
  return verdict != kExitOk ? verdict : bench_status;
}

}  // namespace ropecheck
