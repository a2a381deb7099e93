// load_python_subject(): a Python callable as a RopeImpl (an OutsideRope, outside_rope.h) or, when
// it declares the fused cache call, a RopeCacheImpl (python_rope_cache.h). Finds the interpreter
// and the driver, judges the driver's hello (bad input: exit 2) and turns the function's
// `ropecheck` declaration into its capabilities.
#include "plugins/host/python_host.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <variant>

#include "core/errors.h"
#include "core/position_axes.h"
#include "plugins/host/outside_rope.h"
#include "plugins/host/plugin_host.h"
#include "plugins/host/python_process.h"
#include "plugins/host/python_rope_cache.h"
#include "plugins/host/python_rope_form.h"

namespace ropecheck {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kDeclarationKeys[] = {"layouts",      "scaling",      "axes",           "angles",
                                                  "storage",      "max_position", "max_head_dim",   "partial_rotary",
                                                  "backward",     "autograd",     "fused_cache",    "tensors",
                                                  "device",       "rope_form"};
// The keys of a "fused_cache" declaration (docs/porting.md, "The fused cache call").
constexpr std::string_view kFusedKeys[] = {"layouts", "storage", "directions", "padding"};
// The keys of a "rope_form" declaration (docs/porting.md, "The call forms"): RopeFormCapabilities.
constexpr std::string_view kFormKeys[] = {"storage",     "angle_sources", "strided",       "k_optional",
                                          "plain_calls", "norm_weights",  "norm_precision"};

// A name searched on PATH as a shell does; a name with a slash is a path.
std::filesystem::path find_interpreter(const std::string& exe) {
  const auto runnable = [](const std::filesystem::path& p) {
    std::error_code error;
    return std::filesystem::is_regular_file(p, error) && access(p.c_str(), X_OK) == 0;
  };
  if (exe.empty()) throw InvalidInput("--python-exe is empty");
  if (exe.find('/') != std::string::npos) {
    if (!runnable(exe)) throw InvalidInput(fmt::format("--python-exe '{}': no such executable file", exe));
    std::error_code error;
    const auto absolute = std::filesystem::absolute(exe, error);
    return absolute.empty() ? std::filesystem::path(exe) : absolute;
  }
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const auto candidate = std::filesystem::path(dir.empty() ? "." : dir) / exe;
    if (runnable(candidate)) return candidate;
  }
  throw InvalidInput(fmt::format("no '{}' on PATH: install Python 3 or name an interpreter with --python-exe", exe));
}

// The declared value of one key, as a list of strings (a single string is a list of one).
std::vector<std::string> strings_of(const Json& value, std::string_view key) {
  std::vector<std::string> out;
  if (value.is_string()) return {value.get<std::string>()};
  if (!value.is_array() || value.empty()) {
    throw InvalidInput(fmt::format("'{}' must be a string or a non-empty list of strings", key));
  }
  for (const auto& item : value) {
    if (!item.is_string()) throw InvalidInput(fmt::format("'{}' must be a string or a non-empty list of strings", key));
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::int64_t positive_integer(const Json& value, std::string_view key) {
  if (!value.is_number_integer() || value.get<std::int64_t>() <= 0) {
    throw InvalidInput(fmt::format("'{}' must be a positive integer, got {}", key, value.dump()));
  }
  return value.get<std::int64_t>();
}

ScalingKind scaling_of(std::string_view rope_type) {
  static const std::pair<std::string_view, ScalingKind> kKinds[] = {
      {"linear", ScalingKind::linear}, {"ntk", ScalingKind::ntk},       {"dynamic", ScalingKind::dynamic_ntk},
      {"yarn", ScalingKind::yarn},     {"llama3", ScalingKind::llama3}, {"longrope", ScalingKind::longrope}};
  for (const auto& [name, kind] : kKinds) {
    if (name == rope_type) return kind;
  }
  throw InvalidInput(fmt::format("'scaling': unknown rope_type '{}' (linear, ntk, dynamic, yarn, llama3, longrope)",
                                 rope_type));
}

// A declared axis mode ("axes"): the multi-axis modes only, as "scaling" names the scaled kinds
// only (one axis is implied: every function takes it).
AxisMode axis_mode_of(std::string_view name) {
  for (const AxisMode mode : kAllAxisModes) {
    if (mode != AxisMode::none && to_string(mode) == name) return mode;
  }
  throw InvalidInput(fmt::format("'axes': unknown axis mode '{}' (mrope, imrope, vision)", name));
}

// Whether the declaration gives the function a backward pass: "backward" (a function of the
// module, which the driver found and names here) or "autograd": true (torch.autograd through the
// forward). The driver judged what only Python can (callable, torch importable, not both).
bool backward_declared(const Json& declaration) {
  if (declaration.contains("backward") && !declaration["backward"].is_string()) {
    throw InvalidInput("'backward' must be a function of the module or its name");
  }
  if (declaration.contains("autograd") && !declaration["autograd"].is_boolean()) {
    throw InvalidInput("'autograd' must be true or false");
  }
  return declaration.contains("backward") || declaration.value("autograd", false);
}

// The function's `ropecheck` attribute as capabilities; without one (null): both layouts, no
// scaling, one position axis, fp32 angles, fp32 storage. Throws InvalidInput naming what is
// malformed.
RopeCapabilities capabilities_of(const Json& declaration) {
  RopeCapabilities caps;
  caps.layouts = {Layout::interleaved, Layout::half_split};
  caps.angle_precisions = {AnglePrecision::fp32};
  caps.scaling_kinds = {ScalingKind::none};
  caps.isa = "python";
  if (declaration.is_null()) return caps;
  for (const auto& [key, value] : declaration.items()) {
    if (std::find(std::begin(kDeclarationKeys), std::end(kDeclarationKeys), key) == std::end(kDeclarationKeys)) {
      throw InvalidInput(fmt::format("unknown key '{}' (known: {})", key, fmt::join(kDeclarationKeys, ", ")));
    }
  }
  if (declaration.contains("layouts")) {
    caps.layouts.clear();
    for (const auto& name : strings_of(declaration["layouts"], "layouts")) caps.layouts.push_back(parse_layout(name));
  }
  if (declaration.contains("angles")) {
    caps.angle_precisions.clear();
    for (const auto& name : strings_of(declaration["angles"], "angles")) {
      caps.angle_precisions.push_back(parse_angle_precision(name));
    }
  }
  if (declaration.contains("scaling")) {
    for (const auto& name : strings_of(declaration["scaling"], "scaling")) {
      const ScalingKind kind = scaling_of(name);
      if (std::find(caps.scaling_kinds.begin(), caps.scaling_kinds.end(), kind) == caps.scaling_kinds.end()) {
        caps.scaling_kinds.push_back(kind);
      }
    }
  }
  if (declaration.contains("axes")) {
    for (const auto& name : strings_of(declaration["axes"], "axes")) {
      const AxisMode mode = axis_mode_of(name);
      if (std::find(caps.axis_modes.begin(), caps.axis_modes.end(), mode) == caps.axis_modes.end()) {
        caps.axis_modes.push_back(mode);
      }
    }
  }
  if (declaration.contains("storage")) {
    const auto storage = strings_of(declaration["storage"], "storage");
    if (storage.size() != 1) throw InvalidInput("'storage' must be one of fp32, bf16, fp16");  // one judged storage
    const StorageType kinds[] = {StorageType::fp32, StorageType::bf16, StorageType::fp16};
    const auto* found = std::find_if(std::begin(kinds), std::end(kinds),
                                     [&](StorageType t) { return to_string(t) == storage.front(); });
    if (found == std::end(kinds)) throw InvalidInput(fmt::format("'storage' must be fp32, bf16 or fp16, got '{}'", storage.front()));
    caps.storage = *found;
  }
  if (declaration.contains("max_position")) {
    caps.max_position = std::min(caps.max_position, positive_integer(declaration["max_position"], "max_position"));
  }
  if (declaration.contains("max_head_dim")) {
    const auto max_head_dim = positive_integer(declaration["max_head_dim"], "max_head_dim");
    if (max_head_dim < 4 || max_head_dim % 2 != 0) {
      throw InvalidInput(fmt::format("'max_head_dim' must be even and >= 4, got {}", max_head_dim));
    }
    caps.max_head_dim = std::min<int>(caps.max_head_dim, static_cast<int>(std::min<std::int64_t>(max_head_dim, 1 << 20)));
  }
  if (declaration.contains("partial_rotary")) {
    if (!declaration["partial_rotary"].is_boolean()) throw InvalidInput("'partial_rotary' must be true or false");
    caps.partial_rotary = declaration["partial_rotary"].get<bool>();
  }
  if (backward_declared(declaration)) caps.passes.push_back(Pass::backward);
  return caps;
}

// The value of `to_string` among `all` that is `name`; InvalidInput listing them otherwise.
template <typename Enum, std::size_t N>
Enum enum_named(const std::string& name, const Enum (&all)[N], std::string_view key,
                std::string_view dict = "fused_cache") {
  for (const Enum value : all) {
    if (to_string(value) == name) return value;
  }
  std::vector<std::string_view> names;
  for (const Enum value : all) names.push_back(to_string(value));
  throw InvalidInput(fmt::format("'{}': '{}' has '{}', not one of {}", dict, key, name, fmt::join(names, ", ")));
}

template <typename Enum, std::size_t N>
std::vector<Enum> enums_named(const Json& value, const Enum (&all)[N], std::string_view key,
                              std::string_view dict = "fused_cache") {
  std::vector<Enum> out;
  for (const auto& name : strings_of(value, key)) {
    const Enum e = enum_named(name, all, key, dict);
    if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
  }
  return out;
}

// A fused cache call's "fused_cache" declaration as its capabilities (defaults: nhd and hnd, fp32,
// both directions, skip_token), and what a fused call cannot declare (a backward, 16-bit q and k,
// torch on a device without "tensors": "torch").
RopeCacheCapabilities fused_capabilities_of(const Json& declaration) {
  static constexpr CacheLayout kLayouts[] = {CacheLayout::nhd, CacheLayout::hnd, CacheLayout::mla};
  static constexpr CacheStorage kStorages[] = {CacheStorage::fp32, CacheStorage::bf16, CacheStorage::fp16,
                                               CacheStorage::fp8_e4m3, CacheStorage::fp8_e5m2};
  static constexpr ScaleDirection kDirections[] = {ScaleDirection::multiply, ScaleDirection::divide};
  static constexpr PaddingRule kRules[] = {PaddingRule::skip_token, PaddingRule::rotate_q_only};
  const Json& fused = declaration["fused_cache"];
  if (!fused.is_object()) throw InvalidInput("'fused_cache' must be a dict (layouts, storage, directions, padding)");
  for (const auto& [key, value] : fused.items()) {
    if (std::find(std::begin(kFusedKeys), std::end(kFusedKeys), key) == std::end(kFusedKeys)) {
      throw InvalidInput(fmt::format("'fused_cache': unknown key '{}' (known: {})", key, fmt::join(kFusedKeys, ", ")));
    }
  }
  for (const char* key : {"backward", "autograd"}) {
    if (declaration.contains(key)) throw InvalidInput(fmt::format("'{}': the fused cache call has no backward pass", key));
  }
  if (declaration.contains("storage") && declaration["storage"] != "fp32" && declaration["storage"] != Json::array({"fp32"})) {
    throw InvalidInput("'storage': the fused cache call's q, k and v are float32; its cache storage is "
                       "'fused_cache': {'storage': ...}");
  }
  RopeCacheCapabilities caps;
  caps.layouts = fused.contains("layouts") ? enums_named(fused["layouts"], kLayouts, "layouts")
                                           : std::vector<CacheLayout>{CacheLayout::nhd, CacheLayout::hnd};
  caps.storages = fused.contains("storage") ? enums_named(fused["storage"], kStorages, "storage")
                                            : std::vector<CacheStorage>{CacheStorage::fp32};
  caps.directions = fused.contains("directions") ? enums_named(fused["directions"], kDirections, "directions")
                                                 : std::vector<ScaleDirection>{std::begin(kDirections), std::end(kDirections)};
  if (fused.contains("padding")) {
    if (!fused["padding"].is_string()) throw InvalidInput("'fused_cache': 'padding' must be skip_token or rotate_q_only");
    caps.padding = enum_named(fused["padding"].get<std::string>(), kRules, "padding");
  }
  return caps;
}

// A call form's "rope_form" declaration as its capabilities (defaults: RopeFormCapabilities' own:
// fp32, angles from the spec, strided views, k optional, plain calls, no QK-norm), and what a
// form cannot declare (a backward, the RoPE function's "storage", with "fused_cache" too).
RopeFormCapabilities form_capabilities_of(const Json& declaration) {
  static constexpr StorageType kStorages[] = {StorageType::fp32, StorageType::bf16, StorageType::fp16};
  static constexpr AngleSource kSources[] = {AngleSource::spec, AngleSource::cos_sin_cache};
  static constexpr NormWeight kWeights[] = {NormWeight::plain, NormWeight::one_plus};
  static constexpr NormPrecision kPrecisions[] = {NormPrecision::fp32, NormPrecision::storage};
  const Json& form = declaration["rope_form"];
  if (!form.is_object()) throw InvalidInput(fmt::format("'rope_form' must be a dict ({})", fmt::join(kFormKeys, ", ")));
  for (const auto& [key, value] : form.items()) {
    if (std::find(std::begin(kFormKeys), std::end(kFormKeys), key) == std::end(kFormKeys)) {
      throw InvalidInput(fmt::format("'rope_form': unknown key '{}' (known: {})", key, fmt::join(kFormKeys, ", ")));
    }
  }
  if (declaration.contains("fused_cache")) {
    throw InvalidInput("'rope_form' and 'fused_cache' both declared: a function is one call or the other");
  }
  for (const char* key : {"backward", "autograd"}) {
    if (declaration.contains(key)) throw InvalidInput(fmt::format("'{}': a call form has no backward pass", key));
  }
  if (declaration.contains("storage")) {
    throw InvalidInput("'storage': a call form's storage is 'rope_form': {'storage': [...]}");
  }
  RopeFormCapabilities caps;
  if (form.contains("storage")) caps.storages = enums_named(form["storage"], kStorages, "storage", "rope_form");
  if (form.contains("angle_sources")) {
    caps.angle_sources = enums_named(form["angle_sources"], kSources, "angle_sources", "rope_form");
  }
  for (const auto& [key, flag] : {std::pair{"strided", &caps.strided}, std::pair{"k_optional", &caps.k_optional},
                                  std::pair{"plain_calls", &caps.plain_calls}}) {
    if (!form.contains(key)) continue;
    if (!form[key].is_boolean()) throw InvalidInput(fmt::format("'rope_form': '{}' must be True or False", key));
    *flag = form[key].get<bool>();
  }
  if (form.contains("norm_weights")) caps.norm_weights = enums_named(form["norm_weights"], kWeights, "norm_weights", "rope_form");
  if (form.contains("norm_precision")) {
    if (!form["norm_precision"].is_string()) throw InvalidInput("'rope_form': 'norm_precision' must be fp32 or storage");
    if (!caps.normalizes()) throw InvalidInput("'rope_form': 'norm_precision' without 'norm_weights' (no QK-norm)");
    caps.norm_precision = enum_named(form["norm_precision"].get<std::string>(), kPrecisions, "norm_precision", "rope_form");
  }
  if (!caps.plain_calls && !caps.normalizes()) {
    throw InvalidInput("'rope_form': 'plain_calls': False with no 'norm_weights' leaves no call to make");
  }
  return caps;
}

// "tensors" and "device" (the driver judged that torch has the device): torch tensors for a
// fused call or a call form only, a device only with them.
void check_tensor_declaration(const Json& declaration, bool fused) {
  if (declaration.contains("tensors") && declaration["tensors"] != "numpy" && declaration["tensors"] != "torch") {
    throw InvalidInput(fmt::format("'tensors' must be \"numpy\" or \"torch\", got {}", declaration["tensors"].dump()));
  }
  const bool torch = declaration.value("tensors", std::string("numpy")) == "torch";
  if (torch && !fused) {
    throw InvalidInput("'tensors': torch tensors are the fused cache call's and the call forms' (declare "
                       "'fused_cache' or 'rope_form'); a RoPE function gets numpy arrays (torch.from_numpy makes "
                       "them tensors without a copy)");
  }
  if (declaration.contains("device") && !torch) throw InvalidInput("'device' needs 'tensors': 'torch'");
}

}  // namespace

std::filesystem::path python_driver_path() {
  std::error_code error;
  if (const char* set = std::getenv("ROPECHECK_PYTHON_DRIVER"); set != nullptr && *set != '\0') {
    if (!std::filesystem::is_regular_file(set, error)) {
      throw InvalidInput(fmt::format("ROPECHECK_PYTHON_DRIVER '{}': no such file", set));
    }
    return set;
  }
  // Built: build/ropecheck (or build/tests/<room>_tests) and build/share/ropecheck/python/;
  // installed: <prefix>/bin/ropecheck and <prefix>/share/ropecheck/python/.
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    for (const auto& dir : {self.parent_path(), self.parent_path().parent_path()}) {
      const auto driver = dir / ROPECHECK_PYTHON_DRIVER_INSTALLED;
      if (std::filesystem::is_regular_file(driver, error)) return driver;
    }
  }
  throw InvalidInput(fmt::format("the Python driver is missing: no {} beside or above {} (set "
                                 "ROPECHECK_PYTHON_DRIVER)",
                                 ROPECHECK_PYTHON_DRIVER_INSTALLED, self.parent_path().string()));
}

PythonSubject load_python_subject(const std::string& target, const PluginOptions& options) {
  check_plugin_options(options);
  const auto fail = [&](std::string_view why) {
    return InvalidInput(fmt::format("python '{}': {}", target, why));
  };
  PythonStart start{find_interpreter(options.python_exe).string(), python_driver_path().string(), target};
  auto memory = std::make_unique<GuardedBuffers>();
  std::unique_ptr<PythonProcess> worker;
  try {
    worker = std::make_unique<PythonProcess>(start, *memory, worker_wait_seconds(options));
  } catch (const PluginFailure& e) {
    throw fail(fmt::format("the interpreter {} failed while loading it ({}); is it CPython >= 3.9?",
                           start.interpreter, e.what()));
  }
  const Json& hello = worker->hello();
  if (!hello.value("ok", false)) throw fail(hello.value("error", std::string("the driver gave no reason")));
  PythonInfo info;
  info.target = target;
  info.name = hello.value("name", std::string());
  info.interpreter = start.interpreter;
  info.python_version = hello.value("python", std::string());
  info.numpy_version = hello.value("numpy", std::string());
  if (!valid_subject_name(info.name) || info.name.size() > 128) {
    throw fail(fmt::format("'{}' cannot name a subject: python/<name> takes [A-Za-z0-9_.-], at most 128",
                           info.name));
  }
  const Json declaration = hello.contains("declaration") ? hello["declaration"] : Json();
  const bool form = declaration.is_object() && declaration.contains("rope_form");
  const bool fused = !form && declaration.is_object() && declaration.contains("fused_cache");
  RopeCapabilities capabilities;
  RopeCacheCapabilities fused_capabilities;
  RopeFormCapabilities form_capabilities;
  try {
    capabilities = capabilities_of(declaration);
    if (declaration.is_object()) check_tensor_declaration(declaration, fused || form);
    if (fused) fused_capabilities = fused_capabilities_of(declaration);
    if (form) form_capabilities = form_capabilities_of(declaration);
  } catch (const InvalidInput& e) {
    throw fail(fmt::format("its ropecheck declaration: {}", e.what()));
  }
  if (!declaration.is_null()) info.declaration = declaration.dump();
  const std::string doc = hello.value("summary", std::string());
  const std::string summary = doc.empty() ? fmt::format("Python {} (Python {}, numpy {})", target,
                                                        info.python_version, info.numpy_version)
                                          : doc;
  const std::string id = "python/" + info.name;
  GuardedBuffers* shared = memory.get();  // owned by the implementation, which owns the factory too
  auto restart = [start, shared, options]() {
    auto fresh = std::make_unique<PythonProcess>(start, *shared, worker_wait_seconds(options));
    if (!fresh->hello().value("ok", false)) {
      throw PluginFailure("Python function could not be restarted: " + fresh->hello().value("error", std::string()));
    }
    return fresh;
  };
  PythonSubject subject;
  if (form) {
    PythonRopeFormIdentity identity{id, summary, form_capabilities, capabilities, info};
    subject.rope_form = make_python_rope_form(std::move(identity), options, std::move(memory), std::move(worker),
                                              std::move(restart));
    return subject;
  }
  if (fused) {
    PythonRopeCacheIdentity identity{id, summary, fused_capabilities, capabilities, info};
    subject.rope_cache = make_python_rope_cache(std::move(identity), options, std::move(memory), std::move(worker),
                                                std::move(restart));
    return subject;
  }
  OutsideIdentity identity;
  identity.id = id;
  identity.capabilities = capabilities;
  identity.summary = summary;
  identity.noun = "Python function";
  identity.info = info;
  subject.rope = make_outside_rope(std::move(identity), options, std::move(memory), std::move(worker),
                                   [restart]() -> std::unique_ptr<CallServer> { return restart(); });
  return subject;
}

std::unique_ptr<RopeImpl> load_python(const std::string& target, const PluginOptions& options) {
  PythonSubject subject = load_python_subject(target, options);
  if (subject.rope_form != nullptr) {
    throw InvalidInput(fmt::format("python '{}': it declares a call form ('rope_form'), not a RoPE function", target));
  }
  if (subject.rope == nullptr) {
    throw InvalidInput(fmt::format("python '{}': it declares the fused cache call ('fused_cache'), not a RoPE "
                                   "function", target));
  }
  return std::move(subject.rope);
}

std::unique_ptr<RopeCacheImpl> load_python_rope_cache(const std::string& target, const PluginOptions& options) {
  PythonSubject subject = load_python_subject(target, options);
  if (subject.rope_cache == nullptr) {
    throw InvalidInput(fmt::format("python '{}': {}, not a fused cache call (it declares no 'fused_cache')", target,
                                   subject.rope_form != nullptr ? "a call form" : "a RoPE function"));
  }
  return std::move(subject.rope_cache);
}

std::unique_ptr<RopeFormImpl> load_python_rope_form(const std::string& target, const PluginOptions& options) {
  PythonSubject subject = load_python_subject(target, options);
  if (subject.rope_form == nullptr) {
    throw InvalidInput(fmt::format("python '{}': {}, not a call form (it declares no 'rope_form')", target,
                                   subject.rope_cache != nullptr ? "a fused cache call" : "a RoPE function"));
  }
  return std::move(subject.rope_form);
}

const PythonInfo* python_info(const RopeImpl& impl) {
  const OutsideIdentity* identity = outside_identity(impl);
  return identity != nullptr ? std::get_if<PythonInfo>(&identity->info) : nullptr;
}

const PythonInfo* python_info(const RopeCacheImpl& impl) {
  const PythonRopeCacheIdentity* identity = python_rope_cache_identity(impl);
  return identity != nullptr ? &identity->info : nullptr;
}

const PythonInfo* python_info(const RopeFormImpl& impl) {
  const PythonRopeFormIdentity* identity = python_rope_form_identity(impl);
  return identity != nullptr ? &identity->info : nullptr;
}

}  // namespace ropecheck
