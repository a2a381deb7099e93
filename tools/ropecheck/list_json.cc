// list_json(): the registry (registry.h) and property_catalogue() walked into one document.
//   ropecheck list --json
#include "list_json.h"

#include <string>
#include <vector>

#include "property.h"
#include "ropecheck/registry.h"

namespace ropecheck {
namespace {

using Json = nlohmann::ordered_json;

Json capabilities_json(const RopeCapabilities& caps) {
  std::vector<std::string> layouts, precisions;
  for (const auto layout : caps.layouts) layouts.emplace_back(to_string(layout));
  for (const auto precision : caps.angle_precisions) precisions.emplace_back(to_string(precision));
  return {{"layouts", layouts},
          {"angle_precisions", precisions},
          {"partial_rotary", caps.partial_rotary},
          {"isa", caps.isa},
          {"available", caps.available},
          {"unavailable_reason", caps.unavailable_reason}};
}

Json rope_json(const RopeImpl& impl) {
  return {{"id", std::string(impl.id())},
          {"kind", "rope"},
          {"summary", std::string(impl.summary())},
          {"capabilities", capabilities_json(impl.capabilities())}};
}

Json sinusoidal_json(const SinusoidalImpl& impl) {
  return {{"id", std::string(impl.id())},
          {"kind", "sinusoidal"},
          {"summary", std::string(impl.summary())}};
}

}  // namespace

Json list_json() {
  Json rope = Json::array(), sinusoidal = Json::array(), mutants = Json::array(),
       properties = Json::array();
  for (const RopeImpl* impl : rope_implementations()) rope.push_back(rope_json(*impl));
  for (const SinusoidalImpl* impl : sinusoidal_implementations()) {
    sinusoidal.push_back(sinusoidal_json(*impl));
  }
  for (const RopeImpl* impl : rope_mutants()) mutants.push_back(rope_json(*impl));
  for (const SinusoidalImpl* impl : sinusoidal_mutants()) {
    mutants.push_back(sinusoidal_json(*impl));
  }
  for (const auto& p : property_catalogue()) {
    properties.push_back({{"id", std::string(p.id)},
                          {"kind", p.kind == SubjectKind::rope ? "rope" : "sinusoidal"},
                          {"description", std::string(p.description)}});
  }
  return {{"schema", kListSchemaId},
          {"rope_implementations", rope},
          {"sinusoidal_implementations", sinusoidal},
          {"mutants", mutants},
          {"properties", properties}};
}

}  // namespace ropecheck
