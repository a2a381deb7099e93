// run_list(): `ropecheck list [--json]` — what can be verified and benchmarked here: the RoPE
// implementations with their capabilities, the sinusoidal tables, the mutants (apart, labelled)
// and the property catalogue. The text form is rendered from list_json(), so both always agree.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <ostream>

#include "properties/verify/list.h"
#include "core/exit_codes.h"
#include "properties/verify/list_json.h"
#include "plugins/host/plugin_subjects.h"
#include "core/text_table.h"

namespace ropecheck {
namespace {

using Json = nlohmann::ordered_json;

std::string joined(const Json& strings) {
  return fmt::format("{}", fmt::join(strings.get<std::vector<std::string>>(), ","));
}

std::string availability(const Json& caps) {
  if (caps["available"].get<bool>()) return "yes";
  return fmt::format("no ({})", caps["unavailable_reason"].get<std::string>());
}

void print_rope_table(const Json& impls, bool with_kind, std::ostream& out) {
  std::vector<std::string> header = {"ID"};
  if (with_kind) header.emplace_back("KIND");
  header.insert(header.end(), {"ISA", "AVAILABLE", "LAYOUTS", "ANGLES", "STORAGE", "PARTIAL",
                                 "AXES", "PASSES", "SUMMARY"});
  TextTable table(header);
  for (const auto& impl : impls) {
    std::vector<std::string> row = {impl["id"].get<std::string>()};
    if (with_kind) row.push_back(impl["kind"].get<std::string>());
    if (impl.contains("capabilities")) {
      const auto& caps = impl["capabilities"];
      row.insert(row.end(), {caps["isa"].get<std::string>(), availability(caps),
                             joined(caps["layouts"]), joined(caps["angle_precisions"]),
                             caps["storage"].get<std::string>(), caps["partial_rotary"].get<bool>() ? "yes" : "no",
                             joined(caps["axis_modes"]), joined(caps["passes"])});
    } else {
      row.insert(row.end(), {"-", "-", "-", "-", "-", "-", "-", "-"});  // only RoPE has a capability record
    }
    row.push_back(impl["summary"].get<std::string>());
    table.add_row(std::move(row));
  }
  table.print(out);
}

// list --plugin: what ropecheck read from each library (the capabilities verify generates from).
void print_plugins(const Json& plugins, std::ostream& out) {
  out << fmt::format("\nPlugins ({}), each run in a child process (python/...: in its interpreter):\n", plugins.size());
  // STORAGE beside DTYPES: which of the declared dtypes the properties judge it as (plugin.h).
  // AXES: the position axes (ABI 3's multi-axis modes; none alone before it). PASSES: forward,
  // and backward where ABI 4's apply_backward (a Python function's backward) is there.
  TextTable table({"ID", "ABI", "LAYOUTS", "ANGLES", "DTYPES", "STORAGE", "PARTIAL", "MAX HEAD_DIM",
                   "SCALING", "AXES", "PASSES", "PATH"});
  for (const auto& p : plugins) {
    const auto& caps = p["capabilities"];
    if (p.contains("python")) {  // a Python callable: its interpreter in place of an ABI
      const auto& info = p["python"];
      table.add_row({p["id"].get<std::string>(), "python", joined(caps["layouts"]), joined(caps["angle_precisions"]),
                     caps["storage"].get<std::string>(), caps["storage"].get<std::string>(),
                     caps["partial_rotary"].get<bool>() ? "yes" : "no", std::to_string(caps["max_head_dim"].get<int>()),
                     joined(caps["scaling_kinds"]), joined(caps["axis_modes"]), joined(caps["passes"]),
                     info["target"].get<std::string>()});
      table.add_note("    " + p["summary"].get<std::string>());
      table.add_note(fmt::format("    {} (Python {}, numpy {})", info["interpreter"].get<std::string>(),
                                 info["python_version"].get<std::string>(), info["numpy_version"].get<std::string>()));
      continue;
    }
    const auto& info = p["plugin"];
    const int max_head_dim = info["max_head_dim"].get<int>();
    table.add_row({p["id"].get<std::string>(), std::to_string(info["abi_version"].get<int>()),
                   joined(caps["layouts"]), joined(caps["angle_precisions"]),
                   joined(info["dtypes"]), caps["storage"].get<std::string>(),
                   caps["partial_rotary"].get<bool>() ? "yes" : "no",
                   max_head_dim == 0 ? "any" : std::to_string(max_head_dim),
                   joined(caps["scaling_kinds"]), joined(caps["axis_modes"]), joined(caps["passes"]),
                   info["path"].get<std::string>()});
    table.add_note("    " + p["summary"].get<std::string>());
    // What an ABI 2 init chose at run time (a CPU variant, a backend).
    if (const auto chose = info["description"].get<std::string>(); !chose.empty()) {
      table.add_note("    init: " + chose);
    }
    // An ABI 6 plugin's call forms: what the forms entry takes, and its QK-norm.
    if (info.contains("rope_form")) {
      const auto& forms = info["rope_form"];
      const bool norm = !forms["norm_weights"].empty();
      table.add_note(fmt::format("    forms: storages {}; angles from {}; {} views; k {}; {}{}",
                                 joined(forms["storages"]), joined(forms["angle_sources"]),
                                 forms["strided"].get<bool>() ? "strided" : "flat",
                                 forms["k_optional"].get<bool>() ? "optional" : "required",
                                 forms["plain_calls"].get<bool>() ? "plain calls; " : "",
                                 norm ? fmt::format("qk_norm weights {} in {}", joined(forms["norm_weights"]),
                                                    forms["norm_precision"].get<std::string>())
                                      : std::string("no qk_norm")));
    }
  }
  table.print(out);
}

void print_plain_table(const Json& impls, std::ostream& out) {
  TextTable table({"ID", "SUMMARY"});
  for (const auto& impl : impls) {
    table.add_row({impl["id"].get<std::string>(), impl["summary"].get<std::string>()});
  }
  table.print(out);
}

// KV: what K and V are kept in (the bound it is held to); an attention plugin's path and what
// its init chose below it.
void print_attention_table(const Json& impls, std::ostream& out) {
  TextTable table({"ID", "KV", "SUMMARY"});
  for (const auto& impl : impls) {
    table.add_row({impl["id"].get<std::string>(), impl["kv_storage"].get<std::string>(),
                   impl["summary"].get<std::string>()});
    if (impl.contains("plugin")) {
      const auto& info = impl["plugin"];
      table.add_note(fmt::format("    attention plugin {}, loaded into this process", info["path"].get<std::string>()));
      if (const auto chose = info["description"].get<std::string>(); !chose.empty()) table.add_note("    init: " + chose);
    }
  }
  table.print(out);
}

// The fused cache call's modes, then each implementation's: the layouts, storages and FP8 scale
// directions it writes, and what a padding token (slot < 0) does.
void print_rope_cache_table(const Json& impls, std::ostream& out) {
  out << "  modes: layouts nhd [blocks, block_size, kv_heads, head_dim] (vLLM flash, FlashInfer NHD), hnd\n"
         "  [blocks, kv_heads, block_size, head_dim] (FlashInfer HND), mla [blocks, block_size, kv_c | k_pe]\n"
         "  (DeepSeek); storages fp32 bf16 fp16 fp8_e4m3 fp8_e5m2, FP8 scale per tensor or per head,\n"
         "  multiplied (FlashInfer, TensorRT-LLM) or divided (vLLM); padding skip_token or rotate_q_only\n";
  TextTable table({"ID", "AVAILABLE", "LAYOUTS", "STORAGES", "FP8 SCALE", "PADDING", "SUMMARY"});
  for (const auto& impl : impls) {
    table.add_row({impl["id"].get<std::string>(), impl["available"].get<bool>() ? "yes" : "no",
                   joined(impl["layouts"]), joined(impl["storages"]), joined(impl["scale_directions"]),
                   impl["padding"].get<std::string>(), impl["summary"].get<std::string>()});
  }
  table.print(out);
}

// The call forms, then each implementation's: what it takes and its QK-norm.
void print_rope_form_table(const Json& impls, std::ostream& out) {
  out << "  forms: angles from the spec or a cos/sin cache [positions, rotary_dim] indexed by position (vLLM's\n"
         "  cos_sin_cache); q and k as strided views of one buffer (a packed qkv, MLA's q_pe beside its nope\n"
         "  part), k optional; QK-norm before the rotation, x / sqrt(mean(x^2) + eps) * w (Qwen3) or (1 + w)\n"
         "  (Gemma), kept in fp32 or rounded to the storage (an unfused chain)\n";
  TextTable table({"ID", "AVAILABLE", "STORAGES", "ANGLES", "VIEWS", "QK-NORM", "SUMMARY"});
  for (const auto& impl : impls) {
    std::string views = impl["strided"].get<bool>() ? "strided" : "flat";
    views += impl["k_optional"].get<bool>() ? ", k optional" : ", k required";
    std::string norm = impl["norm_weights"].empty() ? "none"
                                                    : joined(impl["norm_weights"]) + " in " +
                                                          impl["norm_precision"].get<std::string>();
    if (!impl["plain_calls"].get<bool>()) norm += " (always)";
    table.add_row({impl["id"].get<std::string>(), impl["available"].get<bool>() ? "yes" : "no",
                   joined(impl["storages"]), joined(impl["angle_sources"]), views, norm,
                   impl["summary"].get<std::string>()});
  }
  table.print(out);
}

void print_text(const Json& list, std::ostream& out) {
  out << fmt::format("RoPE implementations ({}):\n", list["rope_implementations"].size());
  print_rope_table(list["rope_implementations"], false, out);

  if (list.contains("plugins")) print_plugins(list["plugins"], out);

  out << fmt::format("\nSinusoidal implementations ({}):\n",
                     list["sinusoidal_implementations"].size());
  print_plain_table(list["sinusoidal_implementations"], out);

  out << fmt::format("\nAttention implementations ({}):\n",
                     list["attention_implementations"].size());
  print_attention_table(list["attention_implementations"], out);

  out << fmt::format("\nFused RoPE + paged KV-cache write ({}): q and k rotated, k and v written at each token's slot:\n",
                     list["rope_cache_implementations"].size());
  print_rope_cache_table(list["rope_cache_implementations"], out);

  out << fmt::format("\nRoPE in the engines' call forms, QK-norm before it ({}):\n",
                     list["rope_form_implementations"].size());
  print_rope_form_table(list["rope_form_implementations"], out);

  out << fmt::format(
      "\nMUTANTS ({}): deliberately wrong implementations, never run unless asked "
      "(`verify --mutants` or `--impl mutant/...`); each must be caught by some property:\n",
      list["mutants"].size());
  print_rope_table(list["mutants"], true, out);

  out << fmt::format("\nProperties ({}):\n", list["properties"].size());
  TextTable properties({"ID", "KIND", "DESCRIPTION"});
  for (const auto& p : list["properties"]) {
    properties.add_row({p["id"].get<std::string>(), p["kind"].get<std::string>(),
                        p["description"].get<std::string>()});
  }
  properties.print(out);
}

}  // namespace

int run_list(const ListOptions& options, std::ostream& out) {
  const LoadedPlugins loaded = load_plugins(options.plugins, options.plugin_options);
  std::vector<const RopeImpl*> plugins;
  for (const auto& p : loaded.rope) plugins.push_back(p.get());
  std::vector<const AttentionImpl*> attention_plugins;
  for (const auto& p : loaded.attention) attention_plugins.push_back(p.get());
  std::vector<const RopeCacheImpl*> rope_cache_plugins;
  for (const auto& p : loaded.rope_cache) rope_cache_plugins.push_back(p.get());
  std::vector<const RopeFormImpl*> rope_form_plugins;
  for (const auto& p : loaded.rope_form) rope_form_plugins.push_back(p.get());
  const Json list = list_json(plugins, attention_plugins, rope_cache_plugins, rope_form_plugins);
  if (options.json) {
    out << list.dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
  } else {
    print_text(list, out);
  }
  return kExitOk;
}

}  // namespace ropecheck
