// `ropecheck verify --plugin` as a user runs it, for the tests of plugins through the real binary
// (ROPECHECK_CLI_PATH): the run with its verify.json, each property's status in it, and the RoPE
// properties a plugin is expected to run (plugin_test, mrope_plugin_test, backward_plugin_test).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "properties/property.h"
#include "properties/catalogue.h"
#include "tests/support/test_process.h"

namespace ropecheck::test {

inline Exited ropecheck_cli(std::vector<std::string> args) {
  args.insert(args.begin(), ROPECHECK_CLI_PATH);
  return spawn(args);
}

// `ropecheck verify --plugin NAME.so ... --out SCRATCH` and its verify.json.
struct Verified {
  Exited run;
  nlohmann::json json;
};
inline Verified verify_plugin(const std::string& name, std::vector<std::string> args) {
  const ScratchDir out;
  args.insert(args.begin(), {"verify", "--plugin", built_plugin(name), "--out", out.str()});
  Verified v{ropecheck_cli(args), {}};
  if (std::filesystem::exists(out / "verify.json")) v.json = nlohmann::json::parse(slurp(out / "verify.json"));
  return v;
}

inline std::vector<std::string> rope_property_ids() {
  std::vector<std::string> ids;
  for (const auto& p : property_catalogue()) {
    if (p.kind == SubjectKind::rope) ids.emplace_back(p.id);
  }
  return ids;
}

// The properties of the backward pass (properties/backward_properties.cc): they skip on a subject
// that declares the forward only (ABI 1 to 3, an ABI 4 plugin without apply_backward) and run,
// to pass, on one with a backward (backward_plugin_test).
inline bool judges_backward(const std::string& property_id) {
  for (const auto& p : backward_properties()) {
    if (p.id == property_id) return true;
  }
  return false;
}

// Every result row of verify.json for `subject`: property id -> status.
inline std::map<std::string, std::string> statuses(const nlohmann::json& json, const std::string& subject) {
  std::map<std::string, std::string> found;
  for (const auto& r : json.at("results")) {
    if (r.at("subject") == subject) found[r.at("property")] = r.at("status");
  }
  return found;
}

}  // namespace ropecheck::test
