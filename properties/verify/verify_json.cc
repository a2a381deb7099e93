// verify_json(): VerifyRun -> the "ropecheck.verify/1" document, and its atomic write.
// Checked against schemas/verify.schema.json by `ctest -R cli_verify_json_schema`.
#include "properties/verify/verify_json.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <system_error>

#include "properties/verify/repro.h"
#include "core/build_info.h"
#include "core/errors.h"
#include "core/isa.h"

namespace ropecheck {
namespace {

using Json = nlohmann::ordered_json;

// JSON has no Inf or NaN; an unbounded ratio (error over a zero bound, a NaN output) is null.
Json finite_or_null(double x) { return std::isfinite(x) ? Json(x) : Json(nullptr); }

Json tool_json() {
  return {{"name", "ropecheck"},
          {"version", build_info::kVersion},
          {"git_commit", build_info::kGitCommit},
          {"compiler", build_info::kCompiler},
          {"build_type", build_info::kBuildType},
          {"sanitized", build_info::kSanitized}};
}

Json machine_json(const MachineInfo& machine) {
  Json flags = Json::object();
  for (const auto& [flag, present] : machine.flags) flags[flag] = present;
  Json json = {{"cpu_model", machine.cpu_model},
               {"logical_cpus", machine.logical_cpus},
               {"cpu_flags", flags},
               {"dispatched_isa", std::string(to_string(dispatched_isa()))}};
  // What the run was verified on, where it is not a plain CPU: an emulator, and SVE's vector
  // length (its kernels are length agnostic: each length is its own verification).
  if (!machine.emulated_on.empty()) json["emulated_on"] = machine.emulated_on;
  if (const int sve_bits = sve_vector_bits(); sve_bits > 0) json["sve_vector_bits"] = sve_bits;
  return json;
}

Json result_json(const SubjectResults& subject, const PropertyResult& r, const RunConfig& config) {
  return {{"subject", r.subject},
          {"mutant", subject.subject.mutant},
          {"property", r.property},
          {"status", std::string(to_string(r.status))},
          {"cases", r.cases},
          {"worst_ratio", finite_or_null(r.worst_ratio)},
          {"worst_error", finite_or_null(r.worst_error)},
          {"bound", finite_or_null(r.bound)},
          {"units", r.units},
          {"message", r.message},
          {"counterexample", r.counterexample},
          {"reproduce", r.reproduce},
          {"repro_command", failing(r.status) ? repro_command(r, config) : ""},
          {"seconds", r.seconds}};
}

Json kill_matrix_json(const KillMatrix& matrix) {
  Json mutants = Json::array();
  for (const auto& row : matrix.mutants) {
    Json by_property = Json::object();
    for (std::size_t c = 0; c < matrix.properties.size(); ++c) {
      if (row.cells[c]) by_property[matrix.properties[c]] = std::string(to_string(*row.cells[c]));
    }
    mutants.push_back({{"mutant", row.mutant},
                       {"verdict", row.killed() ? "KILLED" : "SURVIVED"},
                       {"killed_by", row.killed_by},
                       {"by_property", by_property}});
  }
  return {{"properties", matrix.properties}, {"mutants", mutants}};
}

}  // namespace

Json verify_json(const VerifyRecord& record) {
  const auto& plan = *record.plan;
  const auto& run = *record.run;
  const auto& summary = *record.summary;
  Json results = Json::array();
  for (const auto& subject : run.subjects) {
    for (const auto& r : subject.results) results.push_back(result_json(subject, r, plan.config));
  }
  Json summary_json = {{"passed", summary.passed},
                       {"failed", summary.failed},
                       {"skipped", summary.skipped},
                       {"mistrusted", summary.mistrusted},
                       {"unexpected_failures", summary.unexpected_failures},
                       {"mutants_killed", summary.mutants_killed},
                       {"mutants_survived", summary.mutants_survived},
                       {"exit_code", summary.exit_code},
                       {"seconds", run.seconds}};
  Json doc = {{"schema", kVerifySchemaId},
              {"tool", tool_json()},
              {"timestamp", run.timestamp},
              {"command_line", record.command_line},
              {"seed", plan.config.seed},
              {"cases", plan.config.cases},
              {"reproduce", plan.config.reproduce},
              {"mutants", plan.mutants},
              {"machine", machine_json(record.machine)},
              {"results", results},
              {"summary", summary_json}};
  if (plan.mutants) doc["kill_matrix"] = kill_matrix_json(*record.matrix);
  return doc;
}

}  // namespace ropecheck
