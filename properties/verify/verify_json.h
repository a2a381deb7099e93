// verify.json: the machine-readable record of a verify run, described exactly by
// schemas/verify.schema.json ("schema": "ropecheck.verify/1"; bump the number on any change that
// breaks a reader). Reports and CI read it; nothing else does.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "properties/verify/kill_matrix.h"
#include "core/machine_info.h"
#include "properties/verify/verify_plan.h"
#include "properties/verify/verify_run.h"
#include "properties/verify/verify_summary.h"

namespace ropecheck {

// 2: the MISTRUSTED status and summary.mistrusted (1 had PASSED, FAILED, SKIPPED only).
inline constexpr const char* kVerifySchemaId = "ropecheck.verify/3";

struct VerifyRecord {
  std::vector<std::string> command_line;
  const VerifyPlan* plan = nullptr;
  const VerifyRun* run = nullptr;
  const KillMatrix* matrix = nullptr;
  const VerifySummary* summary = nullptr;
  MachineInfo machine;
};

nlohmann::ordered_json verify_json(const VerifyRecord& record);

}  // namespace ropecheck
