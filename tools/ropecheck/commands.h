// The `ropecheck` commands as library functions: the CLI (cli_app.cc) parses arguments into these
// options and calls them, and tests call them in-process with the same options.
//   ropecheck list [--json]            ropecheck verify [--impl ID]... [--mutants] ...
// Bad input throws InvalidInput (ropecheck/errors.h); run_cli() turns it into a message and exit 2.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

namespace ropecheck {

// The exit codes of the CLI contract (DESIGN.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;  // a property failed on a real subject, or a mutant survived
inline constexpr int kExitUsage = 2;   // bad usage or input: nothing was judged

// Where `ropecheck` and `ropecheck verify` write their files unless told otherwise.
inline constexpr const char* kDefaultOutDir = "reports/out/latest";

// Where --plugin-timeout starts: long enough for any honest kernel on a tiny case under ASan.
inline constexpr double kDefaultPluginTimeoutSeconds = 10.0;

struct ListOptions {
  bool json = false;
  std::vector<std::filesystem::path> plugins;  // --plugin: loaded (in a child) and listed
  double plugin_timeout = kDefaultPluginTimeoutSeconds;
};

struct VerifyOptions {
  std::vector<std::string> impls;       // registry ids, real or mutant; empty: every real one
  std::vector<std::string> properties;  // property ids; empty: the whole catalogue
  int cases = 100;                      // RapidCheck cases per (subject, property), > 0
  std::uint64_t seed = 1;               // fixed by default: a CI verdict must replay
  bool mutants = false;                 // add every mutant and judge mutants by the kill matrix
  std::string reproduce;                // a RapidCheck reproduce string from a __REPRO line
  std::string isa;                      // scalar|avx2|avx512: as on a CPU with nothing above it
  std::filesystem::path out_dir = kDefaultOutDir;
  // --plugin: shared libraries speaking include/ropecheck/plugin.h, verified as `plugin/<name>`
  // (without --impl, only they are verified); each runs in a child that is killed after
  // plugin_timeout seconds without an answer.
  std::vector<std::filesystem::path> plugins;
  double plugin_timeout = kDefaultPluginTimeoutSeconds;
  // Recorded in verify.json; empty: the equivalent `ropecheck verify ...` command is recorded.
  std::vector<std::string> command_line;
};

// `ropecheck compare BASE CUR`: the CI gate on two Google Benchmark JSON files (bench.json).
struct CompareOptions {
  std::filesystem::path base;     // a bench.json, or a directory holding one
  std::filesystem::path current;  // the same, for the run under test
  double threshold_percent = 5;   // a drop of the medians must exceed this to fail, in [0, 100)
  double alpha = 0.05;            // family-wise (Holm) significance level, in (0, 1)
  std::filesystem::path json_out;  // empty: current/compare.json when current is a directory
};

class RopeImpl;

struct BenchOptions {
  std::string filter;              // a regex over case names (Google Benchmark's filter)
  int repetitions = 5;             // per case; the CI gate needs about 10 (compare warns)
  double min_time = 0.05;          // seconds per repetition
  std::vector<int> threads = {1, 2};  // benchmark threads (kernels) and OpenBLAS threads
  std::vector<std::string> benchmark_flags;   // passed through: --benchmark_...
  // --plugin: timed beside the registry's, one thread (each call crosses to the plugin's worker
  // process through shared memory: the copies are part of what is timed).
  std::vector<std::filesystem::path> plugins;
  double plugin_timeout = kDefaultPluginTimeoutSeconds;
  std::filesystem::path out_dir = kDefaultOutDir;
};

// Prints the registry (implementations, mutants) and the property catalogue, and the --plugin
// libraries' capabilities. Returns kExitOk; InvalidInput for a plugin that does not load.
int run_list(const ListOptions& options, std::ostream& out);

// Runs the selected properties on the selected subjects, prints the result table (and with
// `mutants` the kill matrix) to `out`, writes out_dir/verify.json. Returns kExitOk or
// kExitFailed; throws InvalidInput for bad options (unknown ids, cases <= 0, bad reproduce
// string, unwritable out_dir) before anything runs.
int run_verify(const VerifyOptions& options, std::ostream& out);

// Compares the per-repetition samples of every case in both files (bench_compare.h has the rule),
// prints a table and a summary line to `out`, writes compare.json (see json_out). Returns kExitOk,
// or kExitFailed when a case regressed; throws InvalidInput for a missing or malformed file, a
// case with fewer than 3 repetitions, no case in both files, or a bad threshold or alpha.
int run_compare(const CompareOptions& options, std::ostream& out);

// Runs the benchmark suite (each case verified before it is timed, with its same-run limit),
// prints the console output and the same-run table to `out`, writes out_dir/bench.json.
// Returns kExitOk, or kExitFailed when a case failed its check; InvalidInput for bad options.
int run_bench(const BenchOptions& options, std::ostream& out);

// `ropecheck vectors --out DIR`: golden vectors from the float64 oracle for porters.
struct VectorsOptions {
  std::filesystem::path out_dir;  // required; created; refused when it exists as a non-directory
};

// Writes one directory of .npy files per golden case (golden_cases.cc) and DIR/manifest.json,
// prints the summary (cases, bytes, where) to `out`. Returns kExitOk; throws InvalidInput when
// out_dir is missing, exists and is not a directory, or cannot be written.
int run_vectors(const VectorsOptions& options, std::ostream& out);

// `ropecheck report [--in DIR] [--baseline DIR] [--out DIR]`: report.md, report.html, plots/.
struct ReportOptions {
  std::filesystem::path in_dir = kDefaultOutDir;  // verify.json, bench.json, accuracy.json (any)
  std::filesystem::path baseline_dir;  // empty: none; else a bench.json or a directory holding one
  std::filesystem::path out_dir;       // empty: in_dir
};

// Renders the plots with gnuplot (out_dir/plots/: .dat, .gp, .svg) and writes out_dir/report.md
// and a self-contained out_dir/report.html; prints where to `out`. Returns kExitOk; throws
// InvalidInput when in_dir holds none of the inputs, an input is malformed (naming it), the
// baseline has no bench.json, gnuplot is not on PATH, or out_dir cannot be written.
int run_report(const ReportOptions& options, std::ostream& out);

// `ropecheck` with no arguments: verify with mutants into kDefaultOutDir (a bench and a report
// join it later). `command_line` is recorded in the result files.
int run_main_job(std::ostream& out, std::vector<std::string> command_line);

// The whole CLI: parses argv, runs the command, maps every error to a message on `err` and an
// exit code (help and --version: 0; bad usage or InvalidInput: 2). Never throws.
int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err);
int run_cli(int argc, char** argv);  // with std::cout / std::cerr

}  // namespace ropecheck
