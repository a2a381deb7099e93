// verify.json: the machine-readable record of a verify run, described exactly by
// schemas/verify.schema.json ("schema": "ropecheck.verify/1"; bump the number on any change that
// breaks a reader). Reports and CI read it; nothing else does.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kill_matrix.h"
#include "machine_info.h"
#include "verify_plan.h"
#include "verify_run.h"
#include "verify_summary.h"

namespace ropecheck {

inline constexpr const char* kVerifySchemaId = "ropecheck.verify/1";

struct VerifyRecord {
  std::vector<std::string> command_line;
  const VerifyPlan* plan = nullptr;
  const VerifyRun* run = nullptr;
  const KillMatrix* matrix = nullptr;
  const VerifySummary* summary = nullptr;
  MachineInfo machine;
};

nlohmann::ordered_json verify_json(const VerifyRecord& record);

// Writes `json` to `path` through a temporary file renamed into place, so that a reader never
// sees half a file. Throws InvalidInput when the file cannot be written.
void write_json_file(const nlohmann::ordered_json& json, const std::filesystem::path& path);

// Creates `dir` (and its parents) and checks that a file can be written in it. Throws
// InvalidInput naming the directory otherwise; called before a run so it fails fast.
void prepare_out_dir(const std::filesystem::path& dir);

}  // namespace ropecheck
