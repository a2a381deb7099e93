// load_plugin(): a plugin library (plugin.h) as a RopeImpl (an OutsideRope, outside_rope.h). The
// first worker's LoadReport is judged here (bad input: exit 2) and becomes the capabilities.
#include "plugins/host/plugin_host.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <type_traits>
#include <variant>

#include "core/errors.h"
#include "plugins/host/attention_plugin_host.h"
#include "plugins/host/plugin_guarded_buffers.h"
#include "plugins/host/outside_rope.h"
#include "plugins/host/plugin_process.h"
#include "plugins/host/plugin_rope_cache.h"
#include "plugins/host/plugin_rope_form.h"
#include "ropecheck/plugin.h"

namespace ropecheck {
namespace {

using plugin_protocol::LoadReport;
using plugin_protocol::LoadStage;

constexpr std::uint32_t kKnownLayouts =
    (1u << ROPECHECK_LAYOUT_INTERLEAVED) | (1u << ROPECHECK_LAYOUT_HALF_SPLIT);
constexpr std::uint32_t kKnownAngles = (1u << ROPECHECK_ANGLES_FP32) | (1u << ROPECHECK_ANGLES_FP64) |
                                       (1u << ROPECHECK_ANGLES_FP32_RECURRENCE);
constexpr std::uint32_t kKnownDtypes =
    ROPECHECK_DTYPE_FP32 | ROPECHECK_DTYPE_BF16 | ROPECHECK_DTYPE_FP16;
constexpr std::uint32_t kKnownScalingKinds = (1u << (ROPECHECK_SCALING_LONGROPE + 1)) - 1;
constexpr std::uint32_t kKnownAxisModes = (1u << (ROPECHECK_AXES_VISION + 1)) - 1;

// The ABI's scaling kinds are ScalingKind's values (core/scaling.h), in its order.
static_assert(ROPECHECK_SCALING_NONE == static_cast<int>(ScalingKind::none));
static_assert(ROPECHECK_SCALING_LINEAR == static_cast<int>(ScalingKind::linear));
static_assert(ROPECHECK_SCALING_NTK == static_cast<int>(ScalingKind::ntk));
static_assert(ROPECHECK_SCALING_DYNAMIC_NTK == static_cast<int>(ScalingKind::dynamic_ntk));
static_assert(ROPECHECK_SCALING_YARN == static_cast<int>(ScalingKind::yarn));
static_assert(ROPECHECK_SCALING_LLAMA3 == static_cast<int>(ScalingKind::llama3));
static_assert(ROPECHECK_SCALING_LONGROPE == static_cast<int>(ScalingKind::longrope));
// The ABI's axis modes are AxisMode's values (core/position_axes.h), in its order.
static_assert(ROPECHECK_AXES_NONE == static_cast<int>(AxisMode::none));
static_assert(ROPECHECK_AXES_MROPE == static_cast<int>(AxisMode::mrope));
static_assert(ROPECHECK_AXES_IMROPE == static_cast<int>(AxisMode::imrope));
static_assert(ROPECHECK_AXES_VISION == static_cast<int>(AxisMode::vision));
static_assert(kMaxAxes == std::extent_v<decltype(ropecheck_plugin_spec::sections)>);

// ABI 2 grew the spec after ABI 1's last field and named capability words that were reserved:
// what an ABI 1 library reads stays where it was.
static_assert(offsetof(ropecheck_plugin_spec, scaling) == 32);
static_assert(offsetof(ropecheck_plugin_spec, factor) == 64);  // ABI 1's sizeof
static_assert(offsetof(ropecheck_plugin_capabilities, scaling_kinds) == 24);  // old reserved[0]
static_assert(sizeof(ropecheck_plugin_capabilities) == 64);
// ABI 3 did the same to ABI 2: axis_modes and call->axes took reserved words of the same size
// at the same offsets, and the spec grew past ABI 2's last field (attention_factor), whose end
// is the struct_size an ABI 2 plugin gets (plugin_protocol::kSpecSizeV2).
static_assert(offsetof(ropecheck_plugin_capabilities, axis_modes) == 28);  // ABI 2's reserved0
static_assert(offsetof(ropecheck_plugin_capabilities, max_position) == 32);
static_assert(offsetof(ropecheck_plugin_spec, attention_factor) == 144);
static_assert(plugin_protocol::kSpecSizeV2 == 152);  // ABI 2's sizeof
static_assert(offsetof(ropecheck_plugin_call, axes) == offsetof(ropecheck_plugin_call, threads) + 4);
static_assert(offsetof(ropecheck_plugin_call, reserved) == offsetof(ropecheck_plugin_call, threads) + 8);
// ABI 4's struct is v2's layout, apply_backward in v2's reserved[0]: the worker reads it as v2.
static_assert(sizeof(ropecheck_plugin_v4) == sizeof(ropecheck_plugin_v2));
static_assert(offsetof(ropecheck_plugin_v4, teardown) == offsetof(ropecheck_plugin_v2, teardown));
static_assert(offsetof(ropecheck_plugin_v4, apply_backward) == offsetof(ropecheck_plugin_v2, reserved));
// ABI 5's is v4's, apply_rope_cache and its query in v4's reserved[0] and [1].
static_assert(sizeof(ropecheck_plugin_v5) == sizeof(ropecheck_plugin_v4));
static_assert(offsetof(ropecheck_plugin_v5, apply_backward) == offsetof(ropecheck_plugin_v4, apply_backward));
static_assert(offsetof(ropecheck_plugin_v5, apply_rope_cache) == offsetof(ropecheck_plugin_v4, reserved));
static_assert(offsetof(ropecheck_plugin_v5, query_rope_cache_capabilities) ==
              offsetof(ropecheck_plugin_v4, reserved) + sizeof(void*));
// ABI 6's is v5's, forms in v5's last reserved pointer.
static_assert(sizeof(ropecheck_plugin_v6) == sizeof(ropecheck_plugin_v5));
static_assert(offsetof(ropecheck_plugin_v6, query_rope_cache_capabilities) ==
              offsetof(ropecheck_plugin_v5, query_rope_cache_capabilities));
static_assert(offsetof(ropecheck_plugin_v6, forms) == offsetof(ropecheck_plugin_v5, reserved));

// ABI 1 is frozen in binary: apply_fp16 took the place of reserved[0], so the size and every
// earlier offset must stay those of the first version 1 header (abi_version and struct_size,
// five pointers up to apply_bf16, then four pointer slots: once reserved[4], now apply_fp16 and
// reserved[3]), or libraries built against it would be misread. Function and object pointers
// have one size on POSIX.
constexpr std::size_t kPointer = sizeof(void*);
static_assert(offsetof(ropecheck_plugin_v1, abi_version) == 0);
static_assert(offsetof(ropecheck_plugin_v1, struct_size) == 4);
static_assert(offsetof(ropecheck_plugin_v1, name) == 8);
static_assert(offsetof(ropecheck_plugin_v1, summary) == 8 + kPointer);
static_assert(offsetof(ropecheck_plugin_v1, query_capabilities) == 8 + 2 * kPointer);
static_assert(offsetof(ropecheck_plugin_v1, apply_f32) == 8 + 3 * kPointer);
static_assert(offsetof(ropecheck_plugin_v1, apply_bf16) == 8 + 4 * kPointer);
static_assert(offsetof(ropecheck_plugin_v1, apply_fp16) == 8 + 5 * kPointer);  // old reserved[0]
static_assert(offsetof(ropecheck_plugin_v1, reserved) == 8 + 6 * kPointer);
static_assert(sizeof(ropecheck_plugin_v1) == 8 + 9 * kPointer);

// Why an attention plugin's report is unacceptable (attention_plugin.h), "" when it is fine.
std::string judge_attention(const LoadReport& r) {
  switch (r.stage) {
    case LoadStage::attention_loaded: break;
    case LoadStage::null_entry: return fmt::format("{}() returned NULL", ROPECHECK_ATTENTION_PLUGIN_ENTRY_SYMBOL);
    case LoadStage::wrong_abi:
      return fmt::format("speaks attention plugin ABI version {}; this ropecheck speaks version {}", r.abi_version,
                         ROPECHECK_ATTENTION_PLUGIN_ABI_V1);
    case LoadStage::bad_struct:
      return fmt::format("ropecheck_attention_plugin_v1 is malformed: struct_size {} or query_capabilities or "
                         "attend is NULL",
                         r.struct_size);
    case LoadStage::init_failed:
    case LoadStage::query_failed: return r.detail;
    default: return fmt::format("could not be loaded as an attention plugin (stage {})", static_cast<int>(r.stage));
  }
  if (r.name_truncated != 0 || !valid_subject_name(r.name)) {
    return fmt::format("name '{}' is not 1 to {} characters of [A-Za-z0-9_.-]", r.name,
                       plugin_protocol::kMaxNameBytes);
  }
  const auto& caps = r.attention_caps;
  if (caps.kv_dtype != ROPECHECK_DTYPE_FP32 && caps.kv_dtype != ROPECHECK_DTYPE_FP16) {
    return fmt::format("capabilities: kv_dtype {:#x} (ROPECHECK_DTYPE_FP32 or _FP16)", caps.kv_dtype);
  }
  if (caps.max_head_dim < 0) {
    return fmt::format("capabilities: max_head_dim {} (0 for no limit, else positive)", caps.max_head_dim);
  }
  return {};
}

// Why the report is unacceptable, "" when it is fine.
std::string judge(const LoadReport& r) {
  const auto& caps = r.caps;
  if (r.attention != 0) return judge_attention(r);
  switch (r.stage) {
    case LoadStage::loaded: break;
    case LoadStage::dlopen_failed: return fmt::format("cannot be loaded: {}", r.detail);
    case LoadStage::no_entry:
      return fmt::format("exports no '{}' function (nor '{}'): not a ropecheck plugin (see "
                         "plugins/include/ropecheck/plugin.h, attention_plugin.h)",
                         ROPECHECK_PLUGIN_ENTRY_SYMBOL, ROPECHECK_ATTENTION_PLUGIN_ENTRY_SYMBOL);
    case LoadStage::null_entry: return fmt::format("{}() returned NULL", ROPECHECK_PLUGIN_ENTRY_SYMBOL);
    case LoadStage::wrong_abi:
      return fmt::format("speaks plugin ABI version {}; this ropecheck speaks versions {}, {}, {}, {}, {} and {}",
                         r.abi_version, ROPECHECK_PLUGIN_ABI_V1, ROPECHECK_PLUGIN_ABI_V2,
                         ROPECHECK_PLUGIN_ABI_V3, ROPECHECK_PLUGIN_ABI_V4, ROPECHECK_PLUGIN_ABI_V5,
                         ROPECHECK_PLUGIN_ABI_V6);
    case LoadStage::attention_loaded: return "is an attention plugin";  // never without r.attention
    case LoadStage::bad_struct:
      return r.abi_version != ROPECHECK_PLUGIN_ABI_V1
                 ? fmt::format("ropecheck_plugin_v2 is malformed: struct_size {} (at least {} "
                               "needed) or query_capabilities or apply is NULL, or (ABI 5) one of "
                               "apply_rope_cache and query_rope_cache_capabilities is NULL and the other not, "
                               "or (ABI 6) forms has a struct_size short of its functions or one of them NULL",
                               r.struct_size, plugin_protocol::kMinStructSizeV2)
                 : fmt::format("ropecheck_plugin_v1 is malformed: struct_size {} (at least {} "
                               "needed) or query_capabilities is NULL",
                               r.struct_size, plugin_protocol::kMinStructSize);
    case LoadStage::init_failed:
    case LoadStage::query_failed: return r.detail;
  }
  if (r.name_truncated != 0 || !valid_subject_name(r.name)) {
    return fmt::format("name '{}' is not 1 to {} characters of [A-Za-z0-9_.-]", r.name,
                       plugin_protocol::kMaxNameBytes);
  }
  if ((caps.layouts & kKnownLayouts) == 0 || (caps.layouts & ~kKnownLayouts) != 0) {
    return fmt::format("capabilities: layouts mask {:#x} (bits 0 interleaved, 1 half_split)",
                       caps.layouts);
  }
  if ((caps.angle_precisions & kKnownAngles) == 0 || (caps.angle_precisions & ~kKnownAngles) != 0) {
    return fmt::format("capabilities: angle_precisions mask {:#x} (bits 0 fp32, 1 fp64, 2 fp32_recurrence)",
                       caps.angle_precisions);
  }
  if ((caps.dtypes & kKnownDtypes) == 0 || (caps.dtypes & ~kKnownDtypes) != 0) {
    return fmt::format("capabilities: dtypes mask {:#x} (ROPECHECK_DTYPE_FP32, _BF16, _FP16)",
                       caps.dtypes);
  }
  if ((caps.dtypes & ROPECHECK_DTYPE_FP32) != 0 && r.has_apply_f32 == 0) {
    return "declares fp32 but apply_f32 is NULL";
  }
  if ((caps.dtypes & ROPECHECK_DTYPE_BF16) != 0 && r.has_apply_bf16 == 0) {
    return "declares bf16 but apply_bf16 is NULL";
  }
  if ((caps.dtypes & ROPECHECK_DTYPE_FP16) != 0 && r.has_apply_fp16 == 0) {
    return "declares fp16 but apply_fp16 is NULL";
  }
  if (caps.max_head_dim != 0 && (caps.max_head_dim < 4 || caps.max_head_dim % 2 != 0)) {
    return fmt::format("capabilities: max_head_dim {} (0 for no limit, else even and >= 4)",
                       caps.max_head_dim);
  }
  if ((caps.scaling_kinds & ~kKnownScalingKinds) != 0) {
    return fmt::format("capabilities: scaling_kinds mask {:#x} (bits 0 to {}: ROPECHECK_SCALING_*)",
                       caps.scaling_kinds, ROPECHECK_SCALING_LONGROPE);
  }
  // Zero for ABI 1 and 2 (the worker clears what their reserved word holds).
  if ((caps.axis_modes & ~kKnownAxisModes) != 0) {
    return fmt::format("capabilities: axis_modes mask {:#x} (bits 0 none, 1 mrope, 2 imrope, 3 vision: "
                       "ROPECHECK_AXES_*)",
                       caps.axis_modes);
  }
  if (caps.max_position < 0) {
    return fmt::format("capabilities: max_position {} (0 for ropecheck's limit, else positive)",
                       caps.max_position);
  }
  if (r.has_apply_rope_cache != 0) {
    if (auto why = judge_rope_cache_capabilities(r.cache_caps); !why.empty()) return why;
  }
  if (r.has_apply_rope_form != 0) return judge_form_capabilities(r.form_caps);
  return {};
}

RopeCapabilities to_capabilities(const LoadReport& r) {
  RopeCapabilities caps;
  caps.layouts.clear();
  if (r.caps.layouts & (1u << ROPECHECK_LAYOUT_INTERLEAVED)) caps.layouts.push_back(Layout::interleaved);
  if (r.caps.layouts & (1u << ROPECHECK_LAYOUT_HALF_SPLIT)) caps.layouts.push_back(Layout::half_split);
  if (r.caps.angle_precisions & (1u << ROPECHECK_ANGLES_FP32)) {
    caps.angle_precisions.push_back(AnglePrecision::fp32);
  }
  if (r.caps.angle_precisions & (1u << ROPECHECK_ANGLES_FP64)) {
    caps.angle_precisions.push_back(AnglePrecision::fp64);
  }
  if (r.caps.angle_precisions & (1u << ROPECHECK_ANGLES_FP32_RECURRENCE)) {
    caps.angle_precisions.push_back(AnglePrecision::fp32_recurrence);
  }
  caps.partial_rotary = r.caps.partial_rotary != 0;
  caps.isa = "plugin";
  // The properties' fp32 tensors go to apply_f32 when there is one; else the plugin is judged
  // as its 16-bit storage, bf16 before fp16 (plugin.h): its inputs are storage-exact (fp16's
  // within fp16's range) and its bound has that storage's rounding term.
  caps.storage = (r.caps.dtypes & ROPECHECK_DTYPE_FP32) != 0   ? StorageType::fp32
                 : (r.caps.dtypes & ROPECHECK_DTYPE_BF16) != 0 ? StorageType::bf16
                                                               : StorageType::fp16;
  if (r.caps.max_head_dim != 0) caps.max_head_dim = std::min(caps.max_head_dim, r.caps.max_head_dim);
  if (r.caps.max_position != 0) caps.max_position = std::min(caps.max_position, r.caps.max_position);
  // Unscaled always; the declared kinds beside it (none for ABI 1, whose worker zeroes the mask).
  caps.scaling_kinds = {ScalingKind::none};
  for (const ScalingKind kind : kAllScalingKinds) {
    if (kind != ScalingKind::none && (r.caps.scaling_kinds & (1u << static_cast<int>(kind))) != 0) {
      caps.scaling_kinds.push_back(kind);
    }
  }
  // One axis always; the declared modes beside it (none for ABI 1 and 2: the worker zeroes them).
  caps.axis_modes = {AxisMode::none};
  for (const AxisMode mode : kAllAxisModes) {
    if (mode != AxisMode::none && (r.caps.axis_modes & (1u << static_cast<int>(mode))) != 0) {
      caps.axis_modes.push_back(mode);
    }
  }
  // The forward always; the backward where an ABI 4 plugin has apply_backward.
  if (r.has_apply_backward != 0) caps.passes.push_back(Pass::backward);
  caps.out_of_process = true;  // every call goes to the worker child (plugin_process.h)
  return caps;
}

}  // namespace

double worker_wait_seconds(const PluginOptions& options) {
  return options.timeout_seconds > 0 ? options.timeout_seconds : kWatchdogBaseSeconds;
}

void check_plugin_options(const PluginOptions& options) {
  if (!(options.timeout_seconds >= 0) || !std::isfinite(options.timeout_seconds)) {
    throw InvalidInput(fmt::format("--plugin-timeout must be a number of seconds >= 0 (0: from "
                                   "each call's size), got {}",
                                   options.timeout_seconds));
  }
  if (options.threads < 1 || options.threads > kMaxPluginThreads) {
    throw InvalidInput(fmt::format("--plugin-threads must be 1 to {}, got {}", kMaxPluginThreads,
                                   options.threads));
  }
}

double watchdog_seconds(std::size_t elements) {
  return kWatchdogBaseSeconds + kWatchdogSecondsPerElement * static_cast<double>(elements);
}

PluginLibrary load_plugin_library(const std::filesystem::path& path, const PluginOptions& options) {
  check_plugin_options(options);
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    throw InvalidInput(fmt::format("plugin '{}': {}", path.string(),
                                   std::filesystem::exists(path, error) ? "not a regular file"
                                                                        : "no such file"));
  }
  // dlopen searches the library path for a bare name; the user means the file they named.
  const auto absolute = std::filesystem::absolute(path, error);
  auto memory = std::make_unique<GuardedBuffers>();
  std::unique_ptr<WorkerProcess> worker;
  try {
    worker = std::make_unique<WorkerProcess>(absolute, memory->fd(), worker_wait_seconds(options),
                                             options.threads);
  } catch (const PluginFailure& e) {
    throw InvalidInput(fmt::format("plugin '{}' failed while loading: {}", path.string(), e.what()));
  }
  if (auto why = judge(worker->report()); !why.empty()) {
    throw InvalidInput(fmt::format("plugin '{}' {}", path.string(), why));
  }
  if (worker->report().attention != 0) return {nullptr, load_attention_plugin_here(absolute, worker->report()), nullptr, nullptr};
  PluginInfo info;
  info.path = absolute;
  info.name = worker->report().name;
  info.abi_version = worker->report().abi_version;
  info.dtypes = worker->report().caps.dtypes;
  info.max_head_dim = worker->report().caps.max_head_dim;
  info.description = worker->report().description;
  OutsideIdentity identity;
  identity.id = "plugin/" + info.name;
  identity.summary = worker->report().summary[0] != '\0' ? std::string(worker->report().summary)
                                                         : fmt::format("plugin {}", absolute.string());
  identity.capabilities = to_capabilities(worker->report());
  // ABI 2 and 3 pass call->threads (up to init's max_threads); ABI 1 has no such field.
  if (info.abi_version != ROPECHECK_PLUGIN_ABI_V1) identity.capabilities.max_threads = options.threads;
  if (worker->report().has_apply_rope_cache != 0) {
    info.rope_cache = to_rope_cache_capabilities(worker->report().cache_caps);
  }
  if (worker->report().has_apply_rope_form != 0) {
    info.rope_form = to_rope_form_capabilities(worker->report().form_caps);
  }
  identity.noun = "plugin";
  identity.info = info;
  // A new worker on `memory_fd` after a failure; one that no longer loads is a failure of this call.
  const auto restart_on = [absolute, options](int memory_fd) {
    return [absolute, memory_fd, options]() -> std::unique_ptr<CallServer> {
      auto fresh = std::make_unique<WorkerProcess>(absolute, memory_fd, worker_wait_seconds(options), options.threads);
      if (auto why = judge(fresh->report()); !why.empty()) {
        throw PluginFailure(fmt::format("plugin could not be restarted: {}", why));
      }
      return fresh;
    };
  };
  PluginLibrary library;
  if (info.rope_cache.has_value()) {
    // The fused entry: a worker of its own on memory of its own, started on its first call.
    auto cache_memory = std::make_unique<GuardedBuffers>();
    const int cache_fd = cache_memory->fd();
    library.rope_cache = make_plugin_rope_cache(identity, *info.rope_cache, options, std::move(cache_memory),
                                                restart_on(cache_fd));
  }
  if (info.rope_form.has_value()) {
    // The form entry: likewise a worker of its own on memory of its own.
    auto form_memory = std::make_unique<GuardedBuffers>();
    const int form_fd = form_memory->fd();
    library.rope_form = make_plugin_rope_form(identity, *info.rope_form, options, std::move(form_memory),
                                              restart_on(form_fd));
  }
  const int memory_fd = memory->fd();
  library.rope =
      make_outside_rope(std::move(identity), options, std::move(memory), std::move(worker), restart_on(memory_fd));
  return library;
}

std::unique_ptr<RopeImpl> load_plugin(const std::filesystem::path& path, const PluginOptions& options) {
  PluginLibrary library = load_plugin_library(path, options);
  if (library.attention != nullptr) {
    throw InvalidInput(fmt::format("plugin '{}' is an attention plugin (attention_plugin.h), not a RoPE one",
                                   path.string()));
  }
  return std::move(library.rope);
}

const PluginInfo* plugin_info(const RopeImpl& impl) {
  const OutsideIdentity* identity = outside_identity(impl);
  return identity != nullptr ? std::get_if<PluginInfo>(&identity->info) : nullptr;
}

void throw_unless_ok(std::int32_t status, std::string_view entry, const std::string& call) {
  if (status == ROPECHECK_PLUGIN_OK) return;
  if (status == ROPECHECK_PLUGIN_UNSUPPORTED) throw UnsupportedCase(fmt::format("plugin reported unsupported for {}", call));
  throw PluginFailure(status == ROPECHECK_PLUGIN_ERROR
                          ? fmt::format("plugin returned ERROR ({}); the call: {}", entry, call)
                          : fmt::format("plugin returned unknown status {} ({}); the call: {}", status, entry, call));
}

}  // namespace ropecheck
