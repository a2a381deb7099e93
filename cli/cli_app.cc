// run_cli(): the `ropecheck` command line (CLI11) over the command functions of commands.h, and
// the one place where errors become exit codes: help/--version 0, bad usage or InvalidInput 2.
//   ropecheck --help;  ropecheck verify --help;  ropecheck list --json
#include <cblas.h>
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <iostream>
#include <limits>

#include "cli/cli_app.h"
#include "cli/main_job.h"
#include "core/exit_codes.h"
#include "properties/verify/list.h"
#include "properties/verify/verify.h"
#include "gate/compare.h"
#include "gate/count_command.h"
#include "gate/gate.h"
#include "bench/run_bench.h"
#include "vectors/vectors.h"
#include "vectors/check.h"
#include "reports/report.h"
#include "history/history_add.h"
#include "history/history_report.h"
#include "core/build_info.h"
#include "core/errors.h"
#include "core/isa.h"
#include "core/machine_info.h"

namespace ropecheck {
namespace {

constexpr const char* kExitCodes =
    "Exit: 0 all passed (and every mutant killed); 1 a property failed on an implementation, or "
    "a mutant survived; 2 bad usage or input.";

// With the OpenBLAS core the process runs (core/blas_core.h: maybe not the one OpenBLAS detected).
std::string version_text() {
  return fmt::format("ropecheck {} (git {}, {}, {}{}; OpenBLAS core {})", build_info::kVersion,
                     build_info::kGitCommit, build_info::kCompiler, build_info::kBuildType,
                     build_info::kSanitized ? ", ASan+UBSan" : "", openblas_get_corename());
}

// ROPECHECK_MODEL_SHAPES, when set, else `fallback`: a test suite or a CI job fixes the model
// shapes of every run it makes, as ROPECHECK_ISA fixes the kernel level.
std::string model_shapes_default(const char* fallback) {
  const char* set = std::getenv("ROPECHECK_MODEL_SHAPES");
  return set != nullptr ? set : fallback;
}

// CLI11 would accept "-1" for an unsigned seed by wrapping it; a seed must be exactly what the
// user typed, so it is parsed here, digits only.
std::uint64_t parse_seed(const std::string& text) {
  std::uint64_t seed = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, seed);
  if (text.empty() || error != std::errc() || stop != end) {
    throw InvalidInput(fmt::format(
        "--seed: '{}' is not an unsigned 64-bit integer (digits only, at most {})", text,
        std::numeric_limits<std::uint64_t>::max()));
  }
  return seed;
}

struct Commands {
  CLI::App* list = nullptr;
  CLI::App* verify = nullptr;
  CLI::App* bench = nullptr;
  BenchOptions bench_options;
  std::string bench_out_dir = kDefaultOutDir;
  CLI::App* vectors = nullptr;
  VectorsOptions vectors_options;
  CLI::App* check = nullptr;
  CheckOptions check_options;
  std::string check_angles = "fp64";
  ListOptions list_options;
  VerifyOptions verify_options;
  std::string seed_text = "1";
  std::string out_dir = kDefaultOutDir;
  CLI::App* compare = nullptr;
  CompareOptions compare_options;
  std::string compare_base, compare_current, compare_json;  // paths, as typed
  CLI::App* report = nullptr;
  ReportOptions report_options;
  CLI::App* gate = nullptr;
  GateOptions gate_options;
  CLI::App* count = nullptr;
  CountOptions count_options;
  CLI::App* history_add = nullptr;
  history::AddOptions history_add_options;
  CLI::App* history_report = nullptr;
  history::ReportHistoryOptions history_report_options;
  std::string gate_seed_text = "1", gate_measure = "auto";
  std::string verify_junit;
  CLI::App* app = nullptr;
  MainJobOptions main_job;
  CLI::Option* main_job_cases = nullptr;  // `ropecheck --cases N`: the main job's, before any command
  CLI::Option* main_job_verbose = nullptr;  // `ropecheck --verbose`: the main job's too
  // verify --model-shapes and `ropecheck --model-shapes SET`, parsed after CLI11; the defaults can
  // come from the environment (model_shapes_default).
  std::string verify_model_shapes = model_shapes_default("all");
  std::string main_job_model_shapes = model_shapes_default("short");
};

// --plugin PATH and --python MODULE:FUNCTION (repeatable), --python-exe, --plugin-timeout SECONDS
// and --plugin-threads N; load_plugin() and load_python() judge them (exit 2).
void add_plugin_options(CLI::App& command, std::vector<std::filesystem::path>& plugins,
                        PluginOptions& options) {
  command.add_option("--plugin", plugins,
                     "A RoPE kernel as a shared library (plugins/include/ropecheck/plugin.h), run in a "
                     "child process as implementation plugin/<name> (repeatable)")
      ->type_name("PATH.so")
      ->allow_extra_args(false);
  command.add_option("--python", options.python,
                     "A RoPE as a Python callable fn(q, k, positions, spec) on numpy arrays (docs/porting.md, "
                     "\"Python\"), run in a child process of the interpreter as implementation "
                     "python/MODULE.FUNCTION (repeatable); MODULE may be path/to/file.py")
      ->type_name("MODULE:FUNCTION")
      ->allow_extra_args(false);
  command.add_option("--python-exe", options.python_exe,
                     "The interpreter --python runs in (a venv's or conda's; CPython >= 3.9 with numpy)")
      ->type_name("PATH")
      ->capture_default_str();
  command.add_option("--plugin-timeout", options.timeout_seconds,
                     "Seconds a plugin (or Python function) may take to answer one call before it is "
                     "killed and the property is HANG (loading gets at least 120 s); 0: 3 s plus 1 s per "
                     "million elements of the call")
      ->type_name("SECONDS")
      ->capture_default_str();
  // init's max_threads: what verify may ask (--threads), past the CPUs like the own kernels.
  options.threads = default_verify_threads();
  command.add_option("--plugin-threads", options.threads,
                     "Threads an ABI 2 plugin may use in each call (init's max_threads; verify "
                     "draws counts up to it and --threads, past the CPUs: a split is judged on "
                     "any machine)")
      ->type_name("N")
      ->capture_default_str();
}

void add_list(CLI::App& app, Commands& c) {
  c.list = app.add_subcommand(
      "list", "List the RoPE and sinusoidal implementations (capabilities, available here or "
              "not), the mutants and the properties.");
  c.list->add_flag("--json", c.list_options.json, "Print JSON (schema ropecheck.list/1)");
  add_plugin_options(*c.list, c.list_options.plugins, c.list_options.plugin_options);
  c.list->footer("Exit: 0; 2 bad usage.");
}

void add_verify(CLI::App& app, Commands& c) {
  auto& v = c.verify_options;
  c.verify = app.add_subcommand(
      "verify", "Run the property suite on the implementations; table on stdout, DIR/verify.json.");
  c.verify->add_option("--impl", v.impls,
                       "Implementation id, real or mutant (repeatable; default: every real one; "
                       "see `ropecheck list`)")
      ->type_name("ID")
      ->allow_extra_args(false);
  c.verify->add_option("--property", v.properties,
                       "Property id (repeatable; default: all; see `ropecheck list`)")
      ->type_name("ID")
      ->allow_extra_args(false);
  c.verify->add_option("--cases", v.cases, "RapidCheck cases per (implementation, property), > 0")
      ->capture_default_str();
  c.verify->add_option("--jobs", v.jobs,
                       "Worker processes the subjects are spread over (same results in any number); "
                       "0: one per CPU this process may use")
      ->type_name("N")
      ->capture_default_str();
  c.verify->add_option("--model-shapes", c.verify_model_shapes,
                       "The real model shapes (llama7b prefill 4096, GQA, decode at 131071, head_dim "
                       "256, ...) every RoPE property runs once each after its random cases: all, "
                       "short (up to 512 tokens) or none; default: all, or the environment's "
                       "ROPECHECK_MODEL_SHAPES")
      ->type_name("SET")
      ->capture_default_str();
  c.verify->add_option("--threads", v.threads,
                       "Most threads a call is given: every count from 1 to 8 is drawn, and larger "
                       "ones up to N (the own kernels split the tokens, attention shares its blocks, "
                       "an ABI 2 plugin gets call->threads); 0: 32 or the usable CPUs, whichever is "
                       "more (correctness does not need the threads to run at once)")
      ->type_name("N")
      ->capture_default_str();
  c.verify->add_option("--seed", c.seed_text, "RapidCheck seed, an unsigned 64-bit integer")
      ->type_name("UINT64")
      ->capture_default_str();
  c.verify->add_flag("--mutants", v.mutants,
                     "Also run every mutant; each must be caught (FAILED) by some property");
  c.verify->add_option("--isa", v.isa,
                       "Run as on a CPU whose best level is this one (scalar, avx2, avx512; aarch64: scalar, neon, sve): "
                       "higher levels are skipped, dispatch uses it (env ROPECHECK_ISA)")
      ->type_name("LEVEL");
  c.verify->add_option("--reproduce", v.reproduce,
                       "Replay a failure: the reproduce string of a __REPRO line")
      ->type_name("STR");
  add_plugin_options(*c.verify, v.plugins, v.plugin_options);
  c.verify->add_option("--out", c.out_dir, "Directory for verify.json (created)")
      ->type_name("DIR")
      ->capture_default_str();
  c.verify->add_option("--junit", c.verify_junit,
                       "Also write JUnit XML here: one testcase per property x implementation "
                       "(FAILED a failure, SKIPPED skipped; with --mutants one per mutant)")
      ->type_name("FILE");
  c.verify->footer(kExitCodes);
}

void add_compare(CLI::App& app, Commands& c) {
  auto& o = c.compare_options;
  c.compare = app.add_subcommand(
      "compare", "CI gate: compare two bench results (Google Benchmark JSON) case by case; fail "
                 "on a significant drop of the same-run limit_fraction beyond the threshold. Two "
                 "counted runs (counted.json of `count` or a counted gate) are judged on estimated "
                 "cycles instead, at --threshold default 1.");
  // Existence is checked by the reader, whose message says what a BASE or CUR must be.
  c.compare
      ->add_option("BASE", c.compare_base,
                    "Baseline: a bench.json or a directory holding one (samples: repetitions), or "
                    "a directory of several runs, e.g. a gate's DIR/base (samples: processes)")
      ->required();
  c.compare
      ->add_option("CUR", c.compare_current, "Current: the same kind as BASE")
      ->required();
  c.compare->add_option("--threshold", o.threshold_percent,
                        "Percent drop of the median a regression must exceed, in [0, 100)")
      ->type_name("PCT")
      ->capture_default_str();
  c.compare->add_option("--alpha", o.alpha,
                        "Family-wise significance level over the gated cases (Holm), in (0, 1)")
      ->type_name("A")
      ->capture_default_str();
  c.compare->add_option("--json", c.compare_json,
                        "Write compare.json here (default: CUR/compare.json if CUR is a directory)")
      ->type_name("OUT");
  c.compare->footer(
      "Exit: 0 no regression; 1 a case regressed (one-sided Mann-Whitney U, Holm-adjusted p < "
      "alpha, and median drop beyond the threshold); 2 bad usage or input (missing or malformed "
      "file, a case with fewer than 3 samples, sides of different kinds, no case on both "
      "sides). For CI prefer `ropecheck gate`: paired rounds, and INCONCLUSIVE when too noisy.");
}

void add_gate(CLI::App& app, Commands& c) {
  auto& g = c.gate_options;
  c.gate = app.add_subcommand(
      "gate", "CI regression gate: K rounds, each running the base and the current build as fresh "
              "`bench` processes back to back in random order; per case the paired ratio "
              "current/base over the rounds, a t interval (Holm across cases for REGRESSION), a verdict. "
              "Table on stdout, DIR/gate.json (gate/README.md).");
  c.gate->add_option("--base", g.base, "The baseline: an executable that acts as ropecheck")
      ->type_name("EXE");
  c.gate->add_option("--current", g.current, "The change: an executable that acts as ropecheck")
      ->type_name("EXE");
  c.gate->add_option("--base-plugin", g.base_plugin,
                     "Or: the baseline plugin, benched by this binary (with --plugin)")
      ->type_name("OLD.so");
  c.gate->add_option("--plugin", g.plugin, "The changed plugin (with --base-plugin)")
      ->type_name("NEW.so");
  c.gate->add_option("--base-python", g.base_python,
                     "Or: the baseline Python function FILE.py:FUNCTION, benched by this binary (with --python)");
  c.gate->add_option("--python", g.python, "The changed Python function FILE.py:FUNCTION (with --base-python)");
  c.gate->add_option("--python-exe", g.python_exe, "The interpreter of both Python sides (default: python3 on PATH)")
      ->type_name("PATH");
  c.gate->add_option("--rounds", g.rounds, "Rounds K (each: one base and one current process), >= 3")
      ->type_name("K")
      ->capture_default_str();
  c.gate->add_option("--warmup-rounds", g.warmup_rounds,
                     "Rounds run first and not judged, while the machine settles")
      ->type_name("N")
      ->capture_default_str();
  c.gate->add_option("--max-seconds", g.max_seconds,
                     "Budget: after K rounds, add rounds while a case is INCONCLUSIVE, until this "
                     "many seconds (0: exactly K rounds)")
      ->type_name("S")
      ->capture_default_str();
  c.gate->add_option("--threshold", g.threshold_percent,
                     "Percent slowdown a REGRESSION must exceed (whole interval above it), in (0, 100)")
      ->type_name("PCT")
      ->capture_default_str();
  c.gate->add_option("--cpu", g.cpu,
                     "The CPU both sides' bench processes are pinned to (-1: the highest-numbered "
                     "one the gate may use)")
      ->type_name("N")
      ->capture_default_str();
  c.gate->add_option("--trim", g.trim,
                     "Fraction of each case's rounds dropped from each end before the t interval "
                     "(Yuen's trimmed mean; 0: plain paired t), in [0, 0.25]")
      ->type_name("F")
      ->capture_default_str();
  c.gate->add_option("--alpha", g.alpha, "Chance of a false REGRESSION over the gated cases (Holm), and of a false PASS, in (0, 1)")
      ->type_name("A")
      ->capture_default_str();
  c.gate->add_option("--measure", c.gate_measure,
                     "Per-process value: auto (per case, whichever of the two spreads less over "
                     "the pilot rounds), limit (median case time / same-run probe time), time "
                     "(median real time), or counted (cases that fit the simulated last level "
                     "counted under Valgrind's callgrind and judged on estimated cycles, --threshold "
                     "default 1; the others timed with auto at --timed-threshold)")
      ->check(CLI::IsMember({"auto", "time", "limit", "counted"}))
      ->capture_default_str();
  c.gate->add_option("--counted-calls", g.counted_calls, "With --measure counted: calls collected per case and side")
      ->type_name("N")
      ->capture_default_str();
  c.gate->add_option("--counted-jobs", g.counted_jobs,
                     "With --measure counted: counted processes at a time (0: one per CPU; counts do not depend on it)")
      ->type_name("N")
      ->capture_default_str();
  c.gate->add_option("--timed-threshold", g.timed_threshold_percent,
                     "With --measure counted: the threshold of the cases it times")
      ->type_name("PCT")
      ->capture_default_str();
  c.gate->add_option("--pilot-rounds", g.pilot_rounds,
                     "With --measure auto: rounds run first, not judged, that choose each case's "
                     "measure (>= 3)")
      ->type_name("N")
      ->capture_default_str();
  c.gate->add_option("--repetitions", g.repetitions, "Repetitions per case in each process")
      ->capture_default_str();
  c.gate->add_option("--min-time", g.min_time, "Seconds per repetition")->capture_default_str();
  c.gate->add_option("--filter", g.filter,
                     "Regex over case names to gate instead of the default rule (gate/README.md)")
      ->type_name("RE");
  c.gate->add_option("--seed", c.gate_seed_text, "Seed of the round order, recorded in gate.json")
      ->type_name("UINT64")
      ->capture_default_str();
  c.gate->add_option("--out", g.out_dir, "Directory for gate.json and each round's bench.json")
      ->type_name("DIR")
      ->capture_default_str();
  c.gate->add_option("--junit", g.junit, "Also write JUnit XML (one testcase per case)")
      ->type_name("FILE");
  c.gate->add_option("--markdown", g.markdown, "Also write a short markdown summary")
      ->type_name("FILE");
  c.gate->footer(
      "Exit: 0 PASS (every gated case's interval below +threshold); 1 REGRESSION (some case's "
      "whole Holm-adjusted interval above +threshold); 2 bad usage or input, or a side failed to "
      "run (nothing judged); 3 INCONCLUSIVE (no regression, but some case's interval straddles "
      "the threshold: the output says what K or threshold would resolve it).");
}

void add_count(CLI::App& app, Commands& c) {
  auto& o = c.count_options;
  c.count = app.add_subcommand(
      "count", "Count instead of time: each case in its own process under Valgrind's callgrind "
               "(instructions, simulated cache misses, estimated cycles per call); table and "
               "DIR/counted.json, which compare, report and history read (gate/README.md, \"Counted\").");
  c.count->add_option("--filter", o.filter, "Regex over case names (default: the cases a counted gate counts)")
      ->type_name("RE");
  c.count->add_option("--calls", o.calls, "Calls collected per case, after one that warms the simulated caches")
      ->type_name("N")
      ->capture_default_str();
  c.count->add_option("--jobs", o.jobs, "Counted processes at a time (0: one per CPU; counts do not depend on it)")
      ->type_name("N")
      ->capture_default_str();
  c.count->add_option("--out", o.out_dir, "Directory for counted.json and each case's callgrind output")
      ->type_name("DIR")
      ->capture_default_str();
  c.count->footer("Exit: 0 counted; 2 bad usage, no Valgrind (Debian package valgrind), no case, or a "
                  "case's process failed.");
}

void add_vectors(CLI::App& app, Commands& c) {
  c.vectors = app.add_subcommand(
      "vectors", "Write golden vectors for porting RoPE: one directory of .npy files per case "
                 "(inputs, positions, float64 oracle outputs) and DIR/manifest.json with each "
                 "case's spec and recommended tolerance.");
  c.vectors->add_option("--out", c.vectors_options.out_dir,
                        "Directory to write (created; must not be an existing file)")
      ->type_name("DIR")
      ->required();
  c.vectors->footer("Exit: 0 written; 2 bad usage or an unwritable DIR.");
}

void add_check(CLI::App& app, Commands& c) {
  auto& o = c.check_options;
  c.check = app.add_subcommand(
      "check", "Judge a port's .npy outputs (a CUDA, Triton or Metal kernel, a Python or Rust port) "
               "against golden vectors written by `ropecheck vectors`: per case the worst error as a "
               "fraction of the manifest's bound, and PASS, FAIL or MISSING.");
  c.check->add_option("--vectors", o.vectors_dir, "The golden vectors (a `ropecheck vectors --out` DIR)")
      ->type_name("DIR")
      ->required();
  c.check->add_option("--outputs", o.outputs_dir,
                      "The port's outputs: OUT/<case>/q_out.npy and k_out.npy per RoPE case "
                      "(pe_out.npy per sinusoidal case), each with the dtype and shape of the case's "
                      "q.npy / k.npy: '<f4' fp32, '<f2' fp16, '<u2' bf16 bit patterns, "
                      "[tokens][heads][head_dim]")
      ->type_name("OUT")
      ->required();
  c.check->add_option("--angles", c.check_angles,
                      "How the port forms the angles m*theta_i: fp64 (held to the flat bound) or fp32 "
                      "(the frameworks' way; the bound grows with |m theta_i|)")
      ->check(CLI::IsMember({"fp64", "fp32"}))
      ->capture_default_str();
  c.check->add_option("--kind", o.kind,
                      "Which cases to judge: rope, sinusoidal, rope_cache (the fused RoPE and paged "
                      "KV-cache write: OUT/<case>/q_out.npy, k_cache_out.npy, v_cache_out.npy, each with "
                      "the dtype and shape of the case's q.npy and <k|v>_cache_initial.npy), or rope_form "
                      "(RoPE in an engine's call form, QK-norm before it: OUT/<case>/buffer_out.npy, the "
                      "whole buffer after the call, with the dtype and shape of the case's buffer.npy)")
      ->check(CLI::IsMember({"rope", "sinusoidal", "rope_cache", "rope_form"}))
      ->capture_default_str();
  c.check->add_flag("--only-present", o.only_present,
                    "A case with none of its output files is listed as MISSING without failing the "
                    "run (a port that covers some layouts or dtypes); a case with some of its files "
                    "still fails");
  c.check->footer(
      "Exit: 0 every case PASSED; 1 a case FAILED (an error above its bound, a NaN, a changed "
      "feature past rotary_dim, a changed cache element no valid slot addresses, a changed buffer "
      "element outside the views' rows) or is MISSING an "
      "output file; 2 bad usage or input (a missing "
      "directory, an unreadable or malformed manifest or .npy, an output of another dtype or shape "
      "than its case's, or no output for any case: nothing judged).");
}

void add_report(CLI::App& app, Commands& c) {
  auto& r = c.report_options;
  c.report = app.add_subcommand(
      "report", "Render DIR's verify.json, bench.json, accuracy.json and counted.json (any of them) as "
                "report.md and a self-contained report.html, with gnuplot plots in OUT/plots/.");
  c.report->add_option("--in", r.in_dir, "Directory holding the results")
      ->type_name("DIR")
      ->capture_default_str();
  c.report->add_option("--baseline", r.baseline_dir,
                       "Another run's bench.json, counted.json, or their directory: limit_fraction "
                       "ratios with bootstrap intervals; the change in estimated cycles per counted case")
      ->type_name("DIR");
  c.report->add_option("--out", r.out_dir, "Directory for the report (default: the --in DIR)")
      ->type_name("DIR");
  c.report->footer("Exit: 0 written; 2 bad usage, no or malformed input, or gnuplot missing.");
}

void add_history(CLI::App& app, Commands& c) {
  CLI::App* history = app.add_subcommand(
      "history", "Performance over time: record bench (and counted) runs into a history directory (one file per "
                 "machine, commit and run) and draw it, one plot per case against commit order with "
                 "the steps found marked (history/README.md).");
  history->require_subcommand(1, 1);
  auto& a = c.history_add_options;
  c.history_add = history->add_subcommand(
      "add", "Record a finished `ropecheck bench` (or main job) run, a counted run (counted.json), or "
             "both, into the history, under the commit it measured (git's HEAD here unless --commit). "
             "Checks the run and every entry of the history before writing.");
  c.history_add->add_option("--dir", a.history_dir, "The history directory (created when missing)")
      ->type_name("H")
      ->required();
  c.history_add->add_option("RUN_DIR", a.run_dir, "The run: a directory holding bench.json, counted.json or both (each recorded), or one of the files")
      ->required();
  c.history_add->add_option("--commit", a.commit, "The commit the run measured (a revision git knows; default HEAD)")
      ->type_name("REV");
  c.history_add->add_option("--repo", a.repo, "The git checkout to look the commit up in")
      ->type_name("DIR")
      ->capture_default_str();
  c.history_add->add_option("--commit-date", a.commit_date,
                            "With --commit: its committer date (ISO 8601, `git log --format=%cI`); git "
                            "is then not asked")
      ->type_name("DATE");
  c.history_add->add_option("--branch", a.branch, "The branch to record (default: git's checked-out branch when it holds the commit)")
      ->type_name("NAME");
  c.history_add->add_option("--machine", a.machine,
                            "A name for this machine (default: from the CPU model, CPUs and ISA level); "
                            "a fingerprint of the hardware is appended either way. A counted run's line is "
                            "the simulated machine's, whatever this says")
      ->type_name("NAME");
  c.history_add->footer("Exit: 0 recorded (or already there); 2 bad usage, a bad run, a bad file in the "
                        "history (named), or no such commit.");
  auto& r = c.history_report_options;
  c.history_report = history->add_subcommand(
      "report", "Write OUT/history.md and an offline OUT/history.html: per case the rate and the "
                "fraction of the same-run probe against commit order, one line per machine, the "
                "steps found marked and listed with their commit, size and interval.");
  c.history_report->add_option("--dir", r.history_dir, "The history directory")->type_name("H")->required();
  c.history_report->add_option("--out", r.out_dir, "Directory for the page and plots/")
      ->type_name("OUT")
      ->capture_default_str();
  c.history_report->add_option("--filter", r.filter, "Regex over case names (default: all)")->type_name("RE");
  c.history_report->add_option("--alpha", r.settings.alpha,
                               "Chance of any false step on the page, in (0, 1)")
      ->type_name("A")
      ->capture_default_str();
  c.history_report->add_option("--min-step", r.settings.min_step_percent,
                               "Smallest change marked as a step, percent, in [0, 100)")
      ->type_name("PCT")
      ->capture_default_str();
  c.history_report->add_option("--min-counted-step", r.settings.min_counted_step_percent,
                               "On a counted line: smallest change between consecutive commits marked as a "
                               "step, percent, in [0, 100) (counts are exact: no statistics)")
      ->type_name("PCT")
      ->capture_default_str();
  c.history_report->footer("Exit: 0 written; 2 bad usage, an empty history, a bad file in it (named), "
                           "or gnuplot missing.");
}

void add_bench(CLI::App& app, Commands& c) {
  auto& b = c.bench_options;
  c.bench = app.add_subcommand(
      "bench", "Benchmark every implementation (verified first) beside same-run machine limits; "
               "console table, DIR/bench.json (Google Benchmark JSON).");
  c.bench->add_option("--filter", b.filter, "Regex over case names (default: all)")->type_name("RE");
  c.bench->add_option("--repetitions", b.repetitions, "Repetitions per case (`ropecheck gate` runs a few per process and takes their median; `compare` of two single runs needs about 10)")
      ->capture_default_str();
  c.bench->add_option("--min-time", b.min_time, "Seconds per repetition")->capture_default_str();
  c.bench->add_option("--threads", b.threads, "Thread counts (kernels; OpenBLAS for attention)")
      ->delimiter(',')
      ->capture_default_str();
  c.bench->add_option("--out", c.bench_out_dir, "Directory for bench.json (created)")
      ->type_name("DIR")
      ->capture_default_str();
  c.bench->add_option("--benchmark", b.benchmark_flags,
                      "A Google Benchmark flag passed through, e.g. --benchmark=--benchmark_enable_random_interleaving=true (repeatable)")
      ->type_name("FLAG")
      ->allow_extra_args(false);
  add_plugin_options(*c.bench, b.plugins, b.plugin_options);
  c.bench->add_option("--counted-calls", b.counted_calls,
                      "Count instead of time: run under Valgrind's callgrind as `ropecheck count` and "
                      "`gate --measure counted` start it, one case, N collected calls (counted/README.md)")
      ->type_name("N")->check(CLI::Range(1, 100000));
  c.bench->add_flag("--time-failing", b.time_failing,
                    "Time implementations that fail their check against the oracle too (each such case "
                    "is marked oracle_failed in bench.json and the report; its error printed once)");
  c.bench->add_flag("--emulated-timings", b.emulated_timings,
                    "Time under user-mode emulation (an aarch64 build under qemu-aarch64) anyway: every "
                    "timing is then the emulator's, and bench.json, the console and the report say so. "
                    "Without it (or ROPECHECK_EMULATED_TIMINGS=1) bench refuses there");
  c.bench->footer("Exit: 0 ran; 1 a case failed its check against the oracle (not timed, or timed with "
                  "--time-failing); 2 bad usage.");
}

int dispatch(Commands& c, std::vector<std::string> command_line, std::ostream& out) {
  if (c.main_job_cases->count() > 0 && !c.app->get_subcommands().empty()) {
    throw InvalidInput("--cases before a command is the main job's; give a command's own after it "
                       "(ropecheck verify --cases N)");
  }
  if (c.main_job_verbose->count() > 0 && !c.app->get_subcommands().empty()) {
    throw InvalidInput("--verbose is the main job's (ropecheck --verbose); a command prints its details anyway");
  }
  if (c.bench->parsed()) {
    c.bench_options.out_dir = c.bench_out_dir;
    return run_bench(c.bench_options, out);
  }
  if (c.list->parsed()) return run_list(c.list_options, out);
  if (c.vectors->parsed()) return run_vectors(c.vectors_options, out);
  if (c.check->parsed()) {
    c.check_options.angles = parse_angle_precision(c.check_angles);
    return run_check(c.check_options, out);
  }
  if (c.report->parsed()) return run_report(c.report_options, out);
  if (c.history_add->parsed()) return history::run_history_add(c.history_add_options, out);
  if (c.history_report->parsed()) return history::run_history_report(c.history_report_options, out);
  if (c.compare->parsed()) {
    c.compare_options.base = c.compare_base;
    c.compare_options.current = c.compare_current;
    c.compare_options.json_out = c.compare_json;
    if (c.compare->count("--threshold") > 0) c.compare_options.counted_threshold_percent = c.compare_options.threshold_percent;
    return run_compare(c.compare_options, out);
  }
  if (c.count->parsed()) return run_count(c.count_options, out);
  if (c.gate->parsed()) {
    c.gate_options.seed = parse_seed(c.gate_seed_text);
    c.gate_options.counted = c.gate_measure == "counted";
    c.gate_options.measure = c.gate_measure == "limit"  ? MeasureRule::limit
                             : c.gate_measure == "time" ? MeasureRule::time
                                                        : MeasureRule::automatic;  // counted times with auto
    // Counts resolve far finer than time: a counted gate's own threshold defaults to 1%.
    if (c.gate_options.counted && c.gate->count("--threshold") == 0) c.gate_options.threshold_percent = 1;
    c.gate_options.command_line = std::move(command_line);
    return run_gate(c.gate_options, out);
  }
  if (c.verify->parsed()) {
    c.verify_options.seed = parse_seed(c.seed_text);
    c.verify_options.model_shapes = parse_model_shape_set(c.verify_model_shapes, "--model-shapes");
    if (!c.verify_options.isa.empty()) {
      parse_isa(c.verify_options.isa);  // InvalidInput (exit 2) for an unknown level
      ::setenv("ROPECHECK_ISA", c.verify_options.isa.c_str(), 1);
    }
    dispatched_isa();  // an unknown or unsupported ROPECHECK_ISA is bad input: exit 2 now
    c.verify_options.out_dir = c.out_dir;
    c.verify_options.junit_out = c.verify_junit;
    c.verify_options.command_line = std::move(command_line);
    return run_verify(c.verify_options, out);
  }
  c.main_job.model_shapes = parse_model_shape_set(c.main_job_model_shapes, "--model-shapes");
  c.main_job.command_line = std::move(command_line);
  return run_main_job(c.main_job, out);
}

}  // namespace

int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  try {
    CLI::App app("ropecheck: property-based verification and benchmarking of transformer "
                 "positional encodings (RoPE, sinusoidal).\nWithout a command: the main job, "
                 "`verify --mutants --out reports/out/latest`.",
                 "ropecheck");
    app.set_version_flag("--version", version_text());
    app.require_subcommand(0, 1);
    Commands commands;
    commands.app = &app;
    commands.main_job_cases =
        app.add_option("--cases", commands.main_job.cases,
                       "Without a command: RapidCheck cases per (implementation, property) of the main "
                       "job's verify, > 0 (fewer for a quicker look)")
            ->type_name("N")
            ->capture_default_str();
    commands.main_job_verbose = app.add_flag(
        "--verbose", commands.main_job.verbose,
        "Without a command: print every step's output (verify's table, kill matrix and counterexamples, "
        "the benchmark rows) before the summary; reports/out/latest/main_job.log holds it either way");
    app.add_option("--model-shapes", commands.main_job_model_shapes,
                   "Without a command: the real model shapes of the main job's verify (all, short "
                   "or none; see verify --help); default: short, or the environment's "
                   "ROPECHECK_MODEL_SHAPES")
        ->type_name("SET")
        ->capture_default_str();
    add_list(app, commands);
    add_verify(app, commands);
    add_bench(app, commands);
    add_vectors(app, commands);
    add_check(app, commands);
    add_compare(app, commands);
    add_gate(app, commands);
    add_count(app, commands);
    add_report(app, commands);
    add_history(app, commands);
    app.footer(std::string(kExitCodes) +
               " `gate` adds 3: INCONCLUSIVE, too noisy to decide (see `ropecheck gate --help`).");  // after the subcommands: CLI11 copies a parent's footer into them
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      // CLI11 reports help and --version as "errors" with exit code 0; its own codes for real
      // errors are not the contract's, which has one code for bad usage.
      return app.exit(e, out, err) == 0 ? kExitOk : kExitUsage;
    }
    return dispatch(commands, std::vector<std::string>(argv, argv + argc), out);
  } catch (const InvalidInput& e) {
    err << "ropecheck: error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    // Not bad input and not a verdict either: nothing was judged, so it must not read as 0.
    err << "ropecheck: internal error: " << e.what() << "\n";
    return kExitFailed;
  } catch (...) {
    err << "ropecheck: internal error: unknown exception\n";
    return kExitFailed;
  }
}

int run_cli(int argc, char** argv) { return run_cli(argc, argv, std::cout, std::cerr); }

}  // namespace ropecheck
