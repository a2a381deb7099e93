// list_json(): the registry (registry.h) and property_catalogue() walked into one document.
//   ropecheck list --json
#include "properties/verify/list_json.h"

#include <string>
#include <vector>

#include "properties/property.h"
#include "ropecheck/plugin.h"
#include "plugins/host/attention_plugin_host.h"
#include "plugins/host/plugin_host.h"
#include "plugins/host/python_host.h"
#include "impls/registry.h"

namespace ropecheck {
namespace {

using Json = nlohmann::ordered_json;

Json capabilities_json(const RopeCapabilities& caps) {
  std::vector<std::string> layouts, precisions;
  for (const auto layout : caps.layouts) layouts.emplace_back(to_string(layout));
  for (const auto precision : caps.angle_precisions) precisions.emplace_back(to_string(precision));
  std::vector<std::string> scaling_kinds;
  for (const auto kind : caps.scaling_kinds) scaling_kinds.emplace_back(to_string(kind));
  std::vector<std::string> axis_modes;
  for (const auto mode : caps.axis_modes) axis_modes.emplace_back(to_string(mode));
  std::vector<std::string> passes;
  for (const auto pass : caps.passes) passes.emplace_back(to_string(pass));
  return {{"layouts", layouts},
          {"angle_precisions", precisions},
          {"storage", std::string(to_string(caps.storage))},
          {"partial_rotary", caps.partial_rotary},
          {"max_head_dim", caps.max_head_dim},
          {"frequency_scaling", caps.scaling_kinds.size() > 1},
          {"scaling_kinds", scaling_kinds},
          {"multi_axis", caps.axis_modes.size() > 1},
          {"axis_modes", axis_modes},
          {"backward", caps.implements(Pass::backward)},
          {"passes", passes},
          {"max_position", caps.max_position},
          {"out_of_process", caps.out_of_process},
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

// Tables and attentions have no RoPE capability record: id, kind and summary.
template <typename Impl>
Json plain_json(const Impl& impl, std::string_view kind) {
  return {{"id", std::string(impl.id())},
          {"kind", std::string(kind)},
          {"summary", std::string(impl.summary())}};
}

Json attention_json(const AttentionImpl& impl) {
  Json entry = plain_json(impl, "attention");
  std::string why;
  entry["available"] = impl.available(&why);
  entry["unavailable_reason"] = why;
  entry["kv_storage"] = std::string(to_string(impl.kv_storage()));
  return entry;
}

template <typename Values>
std::vector<std::string> names(const Values& values) {
  std::vector<std::string> out;
  for (const auto value : values) out.emplace_back(to_string(value));
  return out;
}

// A fused cache call: what it writes (layouts, storages, FP8 scale directions) and its padding rule.
Json rope_cache_json(const RopeCacheImpl& impl) {
  Json entry = plain_json(impl, "rope_cache");
  std::string why;
  entry["available"] = impl.available(&why);
  entry["unavailable_reason"] = why;
  const RopeCacheCapabilities caps = impl.capabilities();
  entry["layouts"] = names(caps.layouts);
  entry["storages"] = names(caps.storages);
  entry["scale_directions"] = names(caps.directions);
  entry["padding"] = std::string(to_string(caps.padding));
  return entry;
}

// RoPE in the engines' call forms: what it takes (storages, angle sources, views, k optional,
// plain calls) and its QK-norm (weight conventions, precision). An ABI 6 plugin's "plugin" entry
// holds the same under "rope_form".
void add_form_capabilities(Json& entry, const RopeFormCapabilities& caps) {
  entry["storages"] = names(caps.storages);
  entry["angle_sources"] = names(caps.angle_sources);
  entry["strided"] = caps.strided;
  entry["k_optional"] = caps.k_optional;
  entry["plain_calls"] = caps.plain_calls;
  entry["norm_weights"] = names(caps.norm_weights);
  entry["norm_precision"] = caps.normalizes() ? std::string(to_string(caps.norm_precision)) : "";
}

Json rope_form_json(const RopeFormImpl& impl) {
  Json entry = plain_json(impl, "rope_form");
  std::string why;
  entry["available"] = impl.available(&why);
  entry["unavailable_reason"] = why;
  add_form_capabilities(entry, impl.capabilities());
  return entry;
}

Json plugin_json(const RopeImpl& impl) {
  Json entry = rope_json(impl);
  if (const PluginInfo* info = plugin_info(impl)) {
    std::vector<std::string> dtypes;
    if (info->dtypes & ROPECHECK_DTYPE_FP32) dtypes.emplace_back("fp32");
    if (info->dtypes & ROPECHECK_DTYPE_BF16) dtypes.emplace_back("bf16");
    if (info->dtypes & ROPECHECK_DTYPE_FP16) dtypes.emplace_back("fp16");
    entry["plugin"] = {{"path", info->path.string()},
                       {"abi_version", info->abi_version},
                       {"dtypes", dtypes},
                       {"max_head_dim", info->max_head_dim},
                       {"description", info->description}};
    // An ABI 5 plugin's fused entry (plugin_rope_cache.h): what it writes, and its padding rule.
    if (const auto& fused = info->rope_cache) {
      entry["plugin"]["rope_cache"] = {{"layouts", names(fused->layouts)},
                                       {"storages", names(fused->storages)},
                                       {"scale_directions", names(fused->directions)},
                                       {"padding", std::string(to_string(fused->padding))}};
    }
    // An ABI 6 plugin's forms entry (plugin_rope_form.h): the call forms it takes, its QK-norm.
    if (const auto& forms = info->rope_form) {
      entry["plugin"]["rope_form"] = Json::object();
      add_form_capabilities(entry["plugin"]["rope_form"], *forms);
    }
  }
  if (const PythonInfo* info = python_info(impl)) {
    entry["python"] = {{"target", info->target},
                       {"interpreter", info->interpreter.string()},
                       {"python_version", info->python_version},
                       {"numpy_version", info->numpy_version},
                       {"declaration", info->declaration.empty() ? nlohmann::ordered_json()
                                                                 : nlohmann::ordered_json::parse(info->declaration)}};
  }
  return entry;
}

}  // namespace

Json list_json(const std::vector<const RopeImpl*>& plugins, const std::vector<const AttentionImpl*>& attention_plugins,
               const std::vector<const RopeCacheImpl*>& rope_cache_plugins,
               const std::vector<const RopeFormImpl*>& rope_form_plugins) {
  Json list = list_json();
  for (const RopeCacheImpl* impl : rope_cache_plugins) list["rope_cache_implementations"].push_back(rope_cache_json(*impl));
  for (const RopeFormImpl* impl : rope_form_plugins) list["rope_form_implementations"].push_back(rope_form_json(*impl));
  for (const AttentionImpl* impl : attention_plugins) {
    Json entry = attention_json(*impl);
    if (const AttentionPluginInfo* info = attention_plugin_info(*impl)) {
      entry["plugin"] = {{"path", info->path.string()},
                         {"max_head_dim", info->max_head_dim},
                         {"description", info->description}};
    }
    list["attention_implementations"].push_back(std::move(entry));
  }
  if (plugins.empty()) return list;
  Json entries = Json::array();
  for (const RopeImpl* impl : plugins) entries.push_back(plugin_json(*impl));
  // Right after the registry's RoPE implementations: ordered_json keeps insertion order.
  Json ordered;
  for (auto& [key, value] : list.items()) {
    ordered[key] = value;
    if (key == "rope_implementations") ordered["plugins"] = entries;
  }
  return ordered;
}

Json list_json() {
  Json rope = Json::array(), sinusoidal = Json::array(), attention = Json::array(), rope_cache = Json::array(),
       mutants = Json::array(), properties = Json::array();
  for (const RopeCacheImpl* impl : rope_cache_implementations()) rope_cache.push_back(rope_cache_json(*impl));
  for (const RopeImpl* impl : rope_implementations()) rope.push_back(rope_json(*impl));
  for (const SinusoidalImpl* impl : sinusoidal_implementations()) {
    sinusoidal.push_back(plain_json(*impl, "sinusoidal"));
  }
  for (const AttentionImpl* impl : attention_implementations()) attention.push_back(attention_json(*impl));
  for (const RopeImpl* impl : rope_mutants()) mutants.push_back(rope_json(*impl));
  for (const SinusoidalImpl* impl : sinusoidal_mutants()) {
    mutants.push_back(plain_json(*impl, "sinusoidal"));
  }
  for (const AttentionImpl* impl : attention_mutants()) {
    mutants.push_back(plain_json(*impl, "attention"));
  }
  for (const RopeCacheImpl* impl : rope_cache_mutants()) mutants.push_back(plain_json(*impl, "rope_cache"));
  Json rope_form = Json::array();
  for (const RopeFormImpl* impl : rope_form_implementations()) rope_form.push_back(rope_form_json(*impl));
  for (const RopeFormImpl* impl : rope_form_mutants()) mutants.push_back(plain_json(*impl, "rope_form"));
  for (const auto& p : property_catalogue()) {
    properties.push_back({{"id", std::string(p.id)},
                          {"kind", std::string(to_string(p.kind))},
                          {"description", std::string(p.description)}});
  }
  return {{"schema", kListSchemaId},
          {"rope_implementations", rope},
          {"sinusoidal_implementations", sinusoidal},
          {"attention_implementations", attention},
          {"rope_cache_implementations", rope_cache},
          {"rope_form_implementations", rope_form},
          {"mutants", mutants},
          {"properties", properties}};
}

}  // namespace ropecheck
