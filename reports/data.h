// The inputs of `ropecheck report` as plain structs: verify.json (ropecheck.verify/3, /2 or /1), bench.json
// (Google Benchmark JSON with ropecheck_* context keys), accuracy.json (ropecheck.accuracy/1) and
// counted.json (ropecheck.counted/1, bench/format/counted_json.h, read by its own reader), each optional. Reading checks every field the report uses, so that a malformed file is bad input
// naming the file (exit 2), never a half-drawn report.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/format/bench_json.h"
#include "bench/format/counted_json.h"
#include "reports/case_records.h"

namespace ropecheck {

struct VerifyResultRow {
  std::string subject, property, status;  // status: PASSED | FAILED | SKIPPED
  bool mutant = false;
  std::optional<double> worst_ratio, worst_error, bound;  // null in the file: not finite
  std::string units;
  std::string message, counterexample, repro_command;    // a FAILED row's; "" where absent
};

struct KillRow {
  std::string mutant, verdict;                          // verdict: KILLED | SURVIVED
  std::vector<std::string> killed_by;
  std::map<std::string, std::string> by_property;       // property -> status on the mutant
};

struct VerifyData {
  std::filesystem::path file;
  std::string version, git_commit, compiler, build_type, timestamp, cpu_model, dispatched_isa;
  std::string emulated_on;  // "" natively
  int sve_vector_bits = 0;  // 0: no SVE
  bool sanitized = false;
  int logical_cpus = 0;
  std::vector<std::string> cpu_flags;  // the flags of interest that are present
  std::vector<VerifyResultRow> results;
  bool has_kill_matrix = false;
  std::vector<std::string> kill_properties;
  std::vector<KillRow> kill_rows;
};

struct BenchData {
  std::filesystem::path file;
  std::map<std::string, std::string> context;  // every string (or number, as text) context key
  std::map<std::string, BenchCase> cases;
  std::vector<std::string> order;  // case names in file order (the suite's registry order)
  std::vector<CaseRecord> records;  // one per name of `order`, in its order: what tables and plots read
};
// Adds c at the end of bench's cases, order and records (read_bench_data, and tests that build a
// run by hand).
void add_case(BenchData& bench, BenchCase c);

struct ErrorPoint {
  int log2_position = 0;
  double worst_error = 0, worst_ratio = 0;
};
struct ErrorCurve {
  std::string implementation, angles, storage;
  std::vector<ErrorPoint> points;
  std::optional<double> largest_accurate_position;  // within the fp64-angle bound up to here
  std::optional<double> error_at_4095;
};
// <R_c q, R_(c+delta) k> vs the exact score, per shift c = 2^k (accuracy.json shift_invariance).
struct ShiftCurve {
  std::string implementation, angles, storage;
  double limit = 0, largest_shift = 0;
  std::vector<double> log2_shift, worst_error;
};
struct DecayCurve {
  int d = 0;
  double bound = 0;
  bool holds = false;
  std::vector<double> x, envelope;
};
struct AccuracyData {
  std::filesystem::path file;
  std::vector<ErrorCurve> error_vs_position;
  std::vector<ShiftCurve> shift_invariance;  // empty in files written before it existed
  std::vector<DecayCurve> decay;
};

// A page beside the report that it links to: the performance history (history/, which renders
// it; the report only links it).
struct ReportHistoryLink {
  std::string page;                // relative to the report's directory; empty: none
  std::string summary;             // what the page holds, in a sentence
  std::vector<std::string> steps;  // the steps it marks, one line each
};

struct ReportInputs {
  std::filesystem::path in_dir;
  std::optional<VerifyData> verify;
  std::optional<BenchData> bench;
  std::optional<AccuracyData> accuracy;
  std::optional<CountedRun> counted;
  std::optional<BenchData> baseline;           // --baseline: another run's bench.json
  std::optional<CountedRun> baseline_counted;  // ... and its counted.json
  ReportHistoryLink history;          // from ReportOptions: not read from in_dir
};

// Reads in_dir/{verify,bench,accuracy,counted}.json (those present) and, when `baseline_dir` is not
// empty, its bench.json and counted.json (one of them required there; a bench.json file path is
// its bench.json alone). Throws InvalidInput when in_dir holds none of the four, or naming the
// file when one is unreadable or malformed.
ReportInputs read_report_inputs(const std::filesystem::path& in_dir,
                                const std::filesystem::path& baseline_dir);

VerifyData read_verify_data(const std::filesystem::path& file);
BenchData read_bench_data(const std::filesystem::path& file);
AccuracyData read_accuracy_data(const std::filesystem::path& file);

}  // namespace ropecheck
