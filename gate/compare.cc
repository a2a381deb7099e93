// run_compare(): `ropecheck compare BASE CUR [--threshold PCT] [--alpha A] [--json OUT]`, the CI
// gate on two bench results: a table and a summary line on stdout, compare.json, exit 0 / 1 / 2.
//   ropecheck compare baseline/bench.json reports/out/latest  # + reports/out/latest/compare.json
//   ropecheck compare gate-out/base gate-out/current         # one sample per process (round)
#include <fmt/format.h>

#include <cmath>
#include <ostream>

#include <nlohmann/json.hpp>

#include "gate/compare_rule.h"
#include "bench/format/bench_json.h"
#include "bench/format/counted_json.h"
#include "gate/compare.h"
#include "gate/process_samples.h"
#include "core/errors.h"
#include "core/exit_codes.h"
#include "core/result_files.h"
#include "core/logging.h"
#include "core/build_info.h"
#include "core/text_table.h"

namespace ropecheck {
namespace {

using Json = nlohmann::ordered_json;

// Samples per case and side (repetitions, or processes); with fewer no ordering test means anything.
constexpr std::size_t kMinSamples = 3;

bool gated(const CaseComparison& c) {
  return c.verdict != Verdict::not_gated && c.verdict != Verdict::only_in_base &&
         c.verdict != Verdict::only_in_current;
}
bool in_both(const CaseComparison& c) {
  return c.verdict != Verdict::only_in_base && c.verdict != Verdict::only_in_current;
}

std::string value_text(double v, bool absolute) {
  return absolute ? fmt::format("{:.4g}/s", v) : fmt::format("{:.4f}", v);
}

void print_table(const Comparison& comparison, std::ostream& out) {
  using A = TextTable::Align;
  TextTable table(
      {"CASE", "MEASURE", "BASE MEDIAN", "CURRENT MEDIAN", "CHANGE", "P (ADJ)", "VERDICT"},
      {A::left, A::left, A::right, A::right, A::right, A::right, A::left});
  for (const auto& c : comparison.cases) {
    if (!in_both(c)) {
      table.add_row({c.name, "-", "-", "-", "-", "-", std::string(to_string(c.verdict))});
      continue;
    }
    table.add_row({c.name, c.absolute ? "1/real_time (absolute)" : "limit_fraction",
                   value_text(c.base_median, c.absolute), value_text(c.current_median, c.absolute),
                   fmt::format("{:+.1f}%", 100 * c.change),
                   gated(c) ? fmt::format("{:.3g}", c.p_adjusted) : "-",
                   std::string(to_string(c.verdict))});
  }
  table.print(out);
}

// What a sample is: the unit of replication decides what the test can claim.
std::string sample_line(const BenchSamples& base, const BenchSamples& current) {
  if (base.per_process) {
    return fmt::format("samples: one per process (median of its repetitions), {} base and {} "
                       "current bench.json files", base.files, current.files);
  }
  return "samples: the repetitions of one process per side; repetitions in one process are not "
         "independent runs of a build (bench/README.md), so give directories of several runs "
         "(e.g. a gate's --out DIR/base and DIR/current) for process-level samples";
}

std::string summary_line(const Comparison& comparison, const CompareSettings& settings) {
  const auto count = [&](Verdict v) {
    const auto it = comparison.counts.find(v);
    return it == comparison.counts.end() ? std::size_t{0} : it->second;
  };
  return fmt::format(
      "compare: {} REGRESSION, {} faster, {} ok, {} not significant of {} gated case(s); "
      "{} only in base, {} only in current, {} probe(s) not gated "
      "(one-sided Mann-Whitney U, Holm-adjusted, alpha {}, threshold {}%) -> {}",
      count(Verdict::regression), count(Verdict::faster), count(Verdict::ok),
      count(Verdict::not_significant), comparison.gated, count(Verdict::only_in_base),
      count(Verdict::only_in_current), count(Verdict::not_gated), settings.alpha,
      settings.threshold_percent, comparison.regressed() ? "FAILED" : "passed");
}

// JSON has no Inf or NaN.
Json case_json(const CaseComparison& c) {
  Json j = {{"name", c.name}, {"verdict", std::string(to_string(c.verdict))}};
  if (!in_both(c)) return j;
  j["measure"] = c.absolute ? "runs_per_second" : "limit_fraction";
  j["base_repetitions"] = c.base_n;
  j["current_repetitions"] = c.current_n;
  j["base_median"] = number_or_null(c.base_median);
  j["current_median"] = number_or_null(c.current_median);
  j["change_percent"] = number_or_null(100 * c.change);
  if (gated(c)) {
    j["u"] = c.u;
    j["exact"] = c.exact;
    j["p_lower"] = c.p_lower;
    j["p_higher"] = c.p_higher;
    j["p_lower_adjusted"] = c.p_lower_adjusted;
    j["p_higher_adjusted"] = c.p_higher_adjusted;
    j["p_adjusted"] = c.p_adjusted;
  }
  return j;
}

Json compare_json(const CompareOptions& options, const Comparison& comparison, bool per_process,
                  int exit_code) {
  Json cases = Json::array();
  for (const auto& c : comparison.cases) cases.push_back(case_json(c));
  Json counts = Json::object();
  for (const auto& [verdict, n] : comparison.counts) counts[std::string(to_string(verdict))] = n;
  return {{"schema", kCompareSchemaId},
          {"tool", {{"name", "ropecheck"}, {"version", build_info::kVersion},
                    {"git_commit", build_info::kGitCommit}}},
          {"base", per_process ? options.base.string() : bench_json_path(options.base).string()},
          {"current",
           per_process ? options.current.string() : bench_json_path(options.current).string()},
          {"samples", per_process ? "processes" : "repetitions"},
          {"threshold_percent", options.threshold_percent},
          {"alpha", options.alpha},
          {"test", "mann_whitney_u_one_sided"},
          {"correction", "holm"},
          {"gated_cases", comparison.gated},
          {"cases", cases},
          {"warnings", comparison.warnings},
          {"summary", {{"counts", counts}, {"exit_code", exit_code}}}};
}

}  // namespace

int run_compare(const CompareOptions& options, std::ostream& out) {
  const bool base_counted = is_counted_run(options.base), current_counted = is_counted_run(options.current);
  if (base_counted && current_counted) return run_compare_counted(options, out);
  if (base_counted || current_counted) {
    throw InvalidInput("compare: one side is a counted run (counted.json) and the other a timed one "
                       "(bench.json); give both sides the same kind");
  }
  const CompareSettings settings{options.threshold_percent, options.alpha};
  progress_log().info("compare: base {}, current {}", bench_json_path(options.base).string(),
                      bench_json_path(options.current).string());
  const auto base = read_bench_samples(options.base, kMinSamples);
  const auto current = read_bench_samples(options.current, kMinSamples);
  if (base.per_process != current.per_process) {
    throw InvalidInput(
        "compare: one side is a single bench.json (samples: repetitions) and the other a "
        "directory of several runs (samples: processes); give both sides the same kind");
  }
  const Comparison comparison = compare_benches(base.cases, current.cases, settings);
  const int exit_code = comparison.regressed() ? kExitFailed : kExitOk;

  print_table(comparison, out);
  for (const auto& warning : comparison.warnings) out << "warning: " << warning << "\n";
  out << sample_line(base, current) << "\n";
  out << summary_line(comparison, settings) << "\n";

  std::filesystem::path json_out = options.json_out;
  std::error_code error;
  if (json_out.empty() && std::filesystem::is_directory(options.current, error)) {
    json_out = options.current / "compare.json";
  }
  if (!json_out.empty()) {
    write_json_file(compare_json(options, comparison, base.per_process, exit_code), json_out);
    progress_log().info("compare: wrote {}", json_out.string());
  }
  return exit_code;
}

}  // namespace ropecheck
