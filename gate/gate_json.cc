// gate_json() (gate_json.h). Per case it also records the other measure's noise, so that every
// gate run says whether real time or probe-normalised time was the quieter ratio on its machine.
#include "gate/gate_json.h"

#include "core/result_files.h"

#include <cmath>

#include "core/build_info.h"
#include "gate/counted_report.h"
#include "gate/gate_rule.h"

namespace ropecheck {
namespace {

using Json = nlohmann::ordered_json;

// Coefficient of variation (percent) of the per-round ratios c[i] / b[i]; null when empty.
Json ratio_cv(const std::vector<double>& b, const std::vector<double>& c) {
  if (b.size() < 2) return nullptr;
  std::vector<double> r;
  for (std::size_t i = 0; i < b.size(); ++i) r.push_back(c[i] / b[i]);
  return 100 * coefficient_of_variation(r);
}

Json case_json(const CaseVerdict& v, const CaseSeries& s) {
  Json j = {{"name", v.name},
            {"verdict", std::string(to_string(v.verdict))},
            {"gated", v.verdict != GateVerdict::flagged},
            {"flag", v.flagged},
            {"rounds", v.rounds},
            {"change_percent", 100 * (v.ratio - 1)},
            {"interval_percent", {100 * (v.ratio_low - 1), 100 * (v.ratio_high - 1)}},
            {"noise_percent", v.noise_percent},
            {"detectable_percent", number_or_null(v.detectable_percent)},
            {"p_regression", v.p_regression},
            {"p_regression_adjusted", v.p_regression_adjusted},
            {"p_pass", v.p_pass},
            {"rounds_needed", v.rounds_needed ? Json(*v.rounds_needed) : Json(nullptr)},
            {"threshold_to_pass_percent", v.verdict == GateVerdict::inconclusive
                                              ? number_or_null(v.threshold_to_pass_percent)
                                              : Json(nullptr)},
            {"measure", std::string(to_string(s.measure))},
            {"pilot_spread_percent", {{"time", number_or_null(100 * s.choice.time_spread)},
                                      {"limit", number_or_null(100 * s.choice.limit_spread)}}},
            {"time_ratio_cv_percent", ratio_cv(s.base_time_ns, s.current_time_ns)},
            {"limit_ratio_cv_percent", ratio_cv(s.base_limit_time, s.current_limit_time)},
            {"ratios", s.ratios},
            {"base_time_ns", s.base_time_ns},
            {"current_time_ns", s.current_time_ns}};
  if (!s.base_limit_time.empty()) {
    j["base_limit_time"] = s.base_limit_time;
    j["current_limit_time"] = s.current_limit_time;
  }
  return j;
}

}  // namespace

Json gate_json(const GateResult& r) {
  Json cases = Json::array();
  for (std::size_t i = 0; i < r.judgement.cases.size(); ++i) {
    cases.push_back(case_json(r.judgement.cases[i], r.series[i]));
  }
  Json rounds = Json::array();
  for (const auto& round : r.rounds) {
    rounds.push_back({{"order", round.base_first ? "base,current" : "current,base"},
                      {"seconds", round.seconds}});
  }
  const auto& j = r.judgement;
  return {{"schema", kGateSchemaId},
          {"tool", {{"name", "ropecheck"}, {"version", build_info::kVersion},
                    {"git_commit", build_info::kGitCommit}}},
          {"command_line", r.command_line},
          {"started", r.started},
          {"seconds", r.seconds},
          {"machine", {{"cpu_model", r.cpu_model}, {"caches", r.caches}}},
          {"base", r.base},
          {"current", r.current},
          {"filter", r.filter},
          {"measure", std::string(to_string(r.measure_rule))},
          {"pilot_rounds", r.pilot_rounds.size()},
          {"threshold_percent", r.settings.threshold_percent},
          {"alpha", r.settings.alpha},
          {"test", "paired_trimmed_t_log_ratio_one_sided"},
          {"trim", r.settings.trim},
          {"correction", "holm_on_regression_intersection_union_on_pass"},
          {"repetitions", r.repetitions},
          {"min_time", r.min_time},
          {"seed", r.seed},
          {"warmup_rounds", r.warmup_rounds},
          {"cpu", r.cpu >= 0 ? nlohmann::ordered_json(r.cpu) : nlohmann::ordered_json(nullptr)},
          {"rounds_added_by_budget", r.budget_used},
          {"rounds", rounds},
          {"cases", cases},
          {"notes", r.notes},
          // /4: the counted half (null when the gate was not counted), and whether cases were timed.
          {"counted", counted_gate_json(r.counted)},
          {"timed", r.timed_ran},
          {"exit_code", combined_exit_code(r)},
          {"summary", {{"gated", j.gated},
                       {"regression", j.regressions},
                       {"inconclusive", j.inconclusive},
                       {"pass", j.passed},
                       {"flagged", j.cases.size() - j.gated},
                       {"exit_code", j.exit_code}}}};
}

}  // namespace ropecheck
