// run_main_job(): what `ropecheck` with no arguments does, into reports/out/latest:
//   1. verify every implementation and mutant (verify.json),
//   2. the accuracy sweeps the report plots (accuracy.json),
//   3. a short benchmark: the kernel levels, references and attention on a few model shapes,
//      one thread, 3 repetitions (bench.json; `ropecheck bench` runs the whole suite),
//   4. the report of all three (report.md, report.html, plots/),
// then prints the verdict summary (reports/verdict.h: one screen) and where the report and the
// data are. What the steps print themselves (verify's table and counterexamples, the benchmark
// rows) goes to reports/out/latest/main_job.log, and with --verbose to stdout too; progress goes
// to stderr. Exit 1 when verify failed on one of ropecheck's own implementations or a mutant
// survived (or a benchmarked implementation failed its check before it was timed).
// History: with ROPECHECK_HISTORY=DIR, between 3 and 4 the bench joins the history DIR (under the
// commit checked out in the working directory) and the history page is rendered into
// reports/out/latest/history/, which the report links (history/README.md).
// Peers: the PyTorch peer plugins (peers/torch) and the ggml peers (peers/ggml: RoPE, and flash
// attention with an F16 KV cache), when they were built next to this binary (<bindir>/plugins/),
// are verified in step 1 and benchmarked in step 3
// beside the built-ins (timed even where they fail their check: --time-failing). What verify or
// bench finds in them is a finding about outside code, listed in verify.json, bench.json, the
// report and the summary, not a failure of the job.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <fstream>
#include <ostream>

#include <nlohmann/json.hpp>

#include "properties/accuracy/accuracy.h"
#include "cli/main_job.h"
#include "core/errors.h"
#include "core/exit_codes.h"
#include "core/result_files.h"
#include "core/subject_ids.h"
#include "properties/verify/verify.h"
#include "bench/run_bench.h"
#include "reports/report.h"
#include "reports/verdict.h"
#include "reports/verdict_text.h"
#include "cli/tee_stream.h"
#include "history/history_add.h"
#include "history/history_report.h"
#include "core/logging.h"
#include "properties/property.h"
#include "plugins/host/plugin_subjects.h"

namespace ropecheck {
namespace {

// The short benchmark's cases: enough for the report's plots, a minute or two on 2 cores.
// Google Benchmark's filter is a POSIX extended regex: the forward's RoPE cases are told from the
// backward's by what follows the layout, "real_time" or a plugin's "threads:" (the backward's has
// "backward/" there). The backward only where it says something new: the fast kernels and the
// peers on one shape; the others' backward is their forward's pass with the sine flipped. Each
// architecture's levels are named (x86-64: avx2, avx512; aarch64: neon, sve); a build has only its own.
#define ROPECHECK_FORWARD "/(real_time|threads:)"
constexpr const char* kShortBenchFilter =
    "^(kernel(_bf16|_fp16)?/(avx2|avx512|avx512bf16|neon|sve)/llama7b_prefill512/interleaved/backward/"
    "|plugin/(torch_[a-z_]+|ggml)/llama7b_prefill512/[a-z_]+/backward/"
    "|kernel/(scalar|avx2|avx512|neon|sve)/(gpt2_small_prefill512|llama7b_prefill512|llama7b_prefill4096|"
    "llama7b_decode_at4095)/interleaved" ROPECHECK_FORWARD
    "|kernel_(bf16/(avx2|avx512|avx512bf16|neon|sve)|fp16/(avx2|avx512|neon|sve))/llama7b_prefill512/interleaved" ROPECHECK_FORWARD
    // and each beside its conversions alone, its ceiling (bench/conversion_cases.h)
    "|conversion_(bf16|fp16)/[a-z0-9]+/llama7b_prefill512/"
    // and each SIMD level beside its rotation alone (bench/rotation_cases.h) where its cases run
    "|rotation(_bf16|_fp16)?/[a-z0-9]+/llama7b_prefill512/interleaved/"
    "|rotation/(avx2|avx512|neon|sve)/(gpt2_small_prefill512|llama7b_prefill4096|llama7b_decode_at4095)/interleaved/"
    "|(complex_multiply|rotate_half)/scalar/(llama7b_prefill512|llama7b_decode_at4095)/interleaved" ROPECHECK_FORWARD
    // The fused RoPE + KV-cache kernels beside their limit and their two passes (bench/fused_cache_cases.h)
    "|fused_cache/(avx2|avx512|neon|sve)/llama3_8b_gqa_prefill4096/nhd_(fp8_e4m3|bf16)/"
    // and the fused peers beside them (bench/fused_cache_peer_cases.h: bf16 only): vLLM's and
    // FlashInfer's torch references, llama.cpp's rope_ext + set_rows graph (reused, as llama.cpp does)
    "|plugin/(torch_[a-z_]+_cache|ggml_compute)/llama3_8b_gqa_prefill4096/nhd_bf16/"
    // The fused QK-norm + RoPE kernels beside their limit and their two passes (bench/qk_norm_rope_cases.h)
    "|qk_norm_rope/(avx2|avx512|neon|sve)/qwen3_8b_prefill8192/cache_bf16/"
    // and the call-form peers beside them (bench/qk_norm_rope_peer_cases.h: bf16 only): vLLM's
    // forward_native with its cache, HF's Qwen3 norm then rotation and llama.cpp's rms_norm + rope_ext
    // graph (reused), each with its own angles
    "|plugin/(torch_(vllm_rope|hf_qk_norm)|ggml_compute)/qwen3_8b_prefill8192/(cache|spec)_bf16/"
    "|sinusoidal/"
    "|attention_blas/.*/head_dim:128/"
    // Multi-axis RoPE: Qwen2-VL's MRoPE beside its 1D twin, HF's layout (the report's table)
    "|kernel(_bf16|_fp16)?/(avx2|avx512|avx512bf16|neon|sve)/qwen2vl_7b(_mrope)?_prefill512/half_split" ROPECHECK_FORWARD
    // Peers beside the kernels on the same shapes (the HF form is half-split only).
    "|plugin/torch_[a-z_]+/(llama7b_prefill512|llama7b_decode_at4095|qwen2vl_7b_mrope_prefill512)/[a-z_]+/threads:"
    "|plugin/ggml(_compute)?/(llama7b_prefill512|llama7b_prefill4096|llama7b_decode_at4095|qwen2vl_7b_mrope_prefill512)"
    "/[a-z_]+/threads:"
    // llama.cpp's flash attention beside attention_blas: two lengths and the GQA problem
    "|plugin/ggml_flash_attn/causal_8heads(_2kv)?/tokens:(512|2048)/head_dim:128/"
    "|kernel/(avx2|avx512|neon|sve)/(llama7b_prefill512|llama7b_prefill4096|llama7b_decode_at4095)/half_split" ROPECHECK_FORWARD ")";
#undef ROPECHECK_FORWARD

// The peers built beside this binary (plugins/peers/*/CMakeLists.txt write them to <build>/plugins/,
// the binary is <build>/ropecheck), sorted; none when they were not built.
std::vector<std::filesystem::path> built_peers() {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return {};
  std::vector<std::filesystem::path> peers;
  // The attention peer with llama.cpp's default F16 KV cache; its F32 twin (ggml_flash_attn_f32.so)
  // is a control for `verify --plugin`, not the job's: each attention peer adds ~15 s of verify on
  // 2 busy cores, where ggml's 2-thread calls wait at their spinning barriers.
  // The fused RoPE + KV-cache peers (ABI 5: vLLM's and FlashInfer's torch references, and the ggml
  // peers' rope_ext + set_rows) are verified by the fused properties and benched beside the own
  // fused kernels. The call-form peers (ABI 6: vLLM's forward_native with its cos/sin cache, HF's
  // Qwen3 QK-norm then rotation) are verified by the form properties and benched beside the own
  // fused QK-norm + RoPE kernels.
  for (const char* name : {"ggml.so", "ggml_compute.so", "ggml_flash_attn.so", "torch_hf.so", "torch_llama.so",
                           "torch_hf_mrope.so", "torch_vllm_cache.so", "torch_flashinfer_cache.so",
                           "torch_vllm_rope.so", "torch_hf_qk_norm.so"}) {
    const auto path = self.parent_path() / "plugins" / name;
    if (std::filesystem::is_regular_file(path, error)) peers.push_back(path);
  }
  return peers;
}

// bench's verdict without the peers' cases: 1 when one of ropecheck's own cases failed its check.
int own_bench_verdict(const std::filesystem::path& dir, int verdict) {
  if (verdict == kExitOk) return verdict;
  std::ifstream in(dir / "bench.json");
  const auto json = nlohmann::json::parse(in, nullptr, false);
  if (json.is_discarded() || !json.contains("benchmarks")) return verdict;
  for (const auto& b : json["benchmarks"]) {
    const bool failed = b.value("error_occurred", false) || b.value("oracle_failed", 0.0) > 0;
    if (failed && !is_outside_id(b.value("run_name", std::string()))) return kExitFailed;
  }
  return kExitOk;
}

}  // namespace

ReportHistoryLink main_job_history(const std::filesystem::path& run_dir,
                                   const std::filesystem::path& history_dir,
                                   const std::filesystem::path& repo) {
  history::AddOptions add;
  add.history_dir = history_dir;
  add.run_dir = run_dir;
  add.repo = repo;
  const auto added = history::add_run(add);
  history::ReportHistoryOptions page;
  page.history_dir = history_dir;
  page.out_dir = run_dir / "history";
  const auto summary = history::write_history_report(page);
  ReportHistoryLink link;
  link.page = "history/history.html";
  link.summary = fmt::format(
      "(and history.md): {} run(s) of {} commit(s) on {} machine line(s) in `{}`, this run at commit "
      "`{}`; {} step(s) marked.",
      summary.runs, summary.commits, summary.lines, history_dir.string(),
      history::short_commit(added.entries.front().stored.entry.commit.id), summary.steps.size());
  link.steps = summary.steps;
  return link;
}

int run_main_job(const MainJobOptions& options, std::ostream& out) {
  const std::filesystem::path dir = kDefaultOutDir;
  // Every step's own output (verify's table and counterexamples, the benchmark rows, the report's
  // paths) goes to the log, and with --verbose to stdout too; stdout otherwise gets the summary.
  prepare_out_dir(dir);
  const std::filesystem::path log_path = dir / kMainJobLog;
  std::ofstream log(log_path);
  if (!log) throw InvalidInput(fmt::format("cannot write '{}'", log_path.string()));
  TeeStream both(out, log);
  std::ostream& details = options.verbose ? static_cast<std::ostream&>(both) : log;

  progress_log().info("main job 1/4: verify --mutants --cases {} --out {}", options.cases, dir.string());
  VerifyOptions verify;
  verify.mutants = true;
  verify.cases = options.cases;
  verify.model_shapes = options.model_shapes;
  verify.out_dir = dir;
  verify.command_line = options.command_line;
  verify.progress_lines = options.verbose ? 0 : 2;  // a line per subject is 50 lines: --verbose's
  const auto peers = built_peers();
  if (!peers.empty()) {
    // With --plugin, verify checks only the plugins unless the implementations are named.
    for (const auto& subject : registry_subjects(false)) verify.impls.push_back(subject.id);
    verify.plugins = peers;
    // An ABI 2 peer (ggml) is called at the thread counts the own kernels are, as `verify`'s
    // --plugin-threads gives them by default: past the CPUs, where a split goes wrong.
    verify.plugin_options.threads = default_verify_threads();
    // One console line counts them by framework, the name's first word ("ggml: 3, torch: 5": eight
    // names would pass a terminal's width); the log has each one's path.
    std::map<std::string, int> frameworks;
    for (const auto& peer : peers) {
      const std::string name = peer.stem().string();
      ++frameworks[name.substr(0, name.find('_'))];
      details << fmt::format("main job: with the peer {}\n", peer.string());
    }
    std::vector<std::string> counts;
    for (const auto& [framework, n] : frameworks) counts.push_back(fmt::format("{} {}", framework, n));
    progress_log().info("main job: with {} peers ({}; main_job.log names them)", peers.size(), fmt::join(counts, ", "));
  }
  // Its exit status counts the peers' failures too; the verdict below is the own implementations'.
  run_verify(verify, details);

  progress_log().info("main job 2/4: accuracy sweeps -> {}", (dir / "accuracy.json").string());
  {
    // The peers on the error-vs-position plot beside ropecheck's implementations.
    const LoadedPlugins loaded = load_plugins(peers, PluginOptions{});
    std::vector<const RopeImpl*> extra;
    for (const auto& peer : loaded.rope) extra.push_back(peer.get());
    write_json_file(accuracy_json(extra), dir / "accuracy.json");
  }

  progress_log().info("main job 3/4: a short bench -> {}", (dir / "bench.json").string());
  BenchOptions bench;
  bench.filter = kShortBenchFilter;
  bench.repetitions = 3;
  bench.min_time = 0.03;
  bench.threads = {1};
  bench.out_dir = dir;
  bench.plugins = peers;
  bench.time_failing = !peers.empty();  // a peer that fails its check is still timed, and marked
  bench.context_out = &details;
  // Under emulation the main job still shows its bench, as the emulator's speeds, marked so on the
  // console and in the report (bench refuses such timings unless asked).
  bench.emulated_timings = true;
  const int bench_status = own_bench_verdict(dir, run_bench(bench, details));

  ReportOptions report;
  report.in_dir = dir;
  report.out_dir = dir;
  const char* history_dir = std::getenv("ROPECHECK_HISTORY");
  if (history_dir != nullptr && *history_dir != '\0') {
    if (bench_status == kExitOk) {
      progress_log().info("main job: ROPECHECK_HISTORY: recording the bench into {}, its page -> {}",
                          history_dir, (dir / "history" / "history.html").string());
      report.history = main_job_history(dir, history_dir);
    } else {
      progress_log().warn("main job: a benchmarked case failed its check: not recorded in {}", history_dir);
    }
  }

  progress_log().info("main job 4/4: report -> {}", (dir / "report.html").string());
  run_report(report, details);

  // The summary, from the files just written, as the report's first section is.
  const VerdictSummary summary = summarize_verdict(read_report_inputs(dir, ""));
  std::string text = verdict_text(summary);
  text += fmt::format("Report: {} (and report.md)\n", (dir / "report.html").string());
  if (!report.history.page.empty()) {
    text += fmt::format("History: {} {}\n", (dir / report.history.page).string(), report.history.summary);
  }
  text += fmt::format("Data:   {}, accuracy.json, bench.json\n", (dir / "verify.json").string());
  text += fmt::format("Log:    {} (every step's output; --verbose prints it)\n", (dir / kMainJobLog).string());
  out << (options.verbose ? "\n" : "") << text;  // stdout holds nothing else unless --verbose
  log << '\n' << text;
  if (!summary.passed_all()) return kExitFailed;
  return bench_status;
}

}  // namespace ropecheck
