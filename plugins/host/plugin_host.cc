// load_plugin() and PluginRope: a plugin library (plugin.h) as a RopeImpl. The first worker's
// LoadReport is judged here (bad input: exit 2); every rotate_qk copies q, k and positions into
// the guarded shared memory, has the worker apply the plugin, checks the guards, copies back.
#include "plugins/host/plugin_host.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/errors.h"
#include "core/frequency.h"
#include "core/scaling_parameters.h"
#include "plugins/host/plugin_guarded_buffers.h"
#include "plugins/host/plugin_process.h"
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

// The ABI's scaling kinds are ScalingKind's values (core/scaling.h), in its order.
static_assert(ROPECHECK_SCALING_NONE == static_cast<int>(ScalingKind::none));
static_assert(ROPECHECK_SCALING_LINEAR == static_cast<int>(ScalingKind::linear));
static_assert(ROPECHECK_SCALING_NTK == static_cast<int>(ScalingKind::ntk));
static_assert(ROPECHECK_SCALING_DYNAMIC_NTK == static_cast<int>(ScalingKind::dynamic_ntk));
static_assert(ROPECHECK_SCALING_YARN == static_cast<int>(ScalingKind::yarn));
static_assert(ROPECHECK_SCALING_LLAMA3 == static_cast<int>(ScalingKind::llama3));
static_assert(ROPECHECK_SCALING_LONGROPE == static_cast<int>(ScalingKind::longrope));

// ABI 2 grew the spec after ABI 1's last field and named capability words that were reserved:
// what an ABI 1 library reads stays where it was.
static_assert(offsetof(ropecheck_plugin_spec, scaling) == 32);
static_assert(offsetof(ropecheck_plugin_spec, factor) == 64);  // ABI 1's sizeof
static_assert(offsetof(ropecheck_plugin_capabilities, scaling_kinds) == 24);  // old reserved[0]
static_assert(sizeof(ropecheck_plugin_capabilities) == 64);

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

bool valid_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '-' || c == '.';
  });
}

// Why the report is unacceptable, "" when it is fine.
std::string judge(const LoadReport& r) {
  const auto& caps = r.caps;
  switch (r.stage) {
    case LoadStage::loaded: break;
    case LoadStage::dlopen_failed: return fmt::format("cannot be loaded: {}", r.detail);
    case LoadStage::no_entry:
      return fmt::format("exports no '{}' function: not a ropecheck plugin (see "
                         "plugins/include/ropecheck/plugin.h)",
                         ROPECHECK_PLUGIN_ENTRY_SYMBOL);
    case LoadStage::null_entry: return fmt::format("{}() returned NULL", ROPECHECK_PLUGIN_ENTRY_SYMBOL);
    case LoadStage::wrong_abi:
      return fmt::format("speaks plugin ABI version {}; this ropecheck speaks versions {} and {}",
                         r.abi_version, ROPECHECK_PLUGIN_ABI_V1, ROPECHECK_PLUGIN_ABI_V2);
    case LoadStage::bad_struct:
      return r.abi_version == ROPECHECK_PLUGIN_ABI_V2
                 ? fmt::format("ropecheck_plugin_v2 is malformed: struct_size {} (at least {} "
                               "needed) or query_capabilities or apply is NULL",
                               r.struct_size, plugin_protocol::kMinStructSizeV2)
                 : fmt::format("ropecheck_plugin_v1 is malformed: struct_size {} (at least {} "
                               "needed) or query_capabilities is NULL",
                               r.struct_size, plugin_protocol::kMinStructSize);
    case LoadStage::init_failed:
    case LoadStage::query_failed: return r.detail;
  }
  if (r.name_truncated != 0 || !valid_name(r.name)) {
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
  if (caps.max_position < 0) {
    return fmt::format("capabilities: max_position {} (0 for ropecheck's limit, else positive)",
                       caps.max_position);
  }
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
  caps.out_of_process = true;  // every call goes to the worker child (plugin_process.h)
  return caps;
}

// "[0, 7, 4096]", the first 16 and a count beyond them.
std::string positions_text(PositionIds positions) {
  constexpr std::size_t kShown = 16;
  const std::size_t shown = std::min(positions.size(), kShown);
  std::string text = fmt::format("[{}", fmt::join(positions.first(shown), ", "));
  if (positions.size() > shown) text += fmt::format(", ... {} in all", positions.size());
  return text + "]";
}

// memcpy with a size of 0 may see a null pointer (a q-only call's empty k), which memcpy forbids.
void copy_bytes(void* to, const void* from, std::size_t bytes) {
  if (bytes != 0) std::memcpy(to, from, bytes);
}

// The spec as the ABI carries it; the LongRoPE factor arrays travel in shared memory (the worker
// sets the pointers). Each scaling parameter is set for the kinds that read it, zero otherwise
// (plugin.h), and the attention factor is resolved here, as frequency.h resolves it.
ropecheck_plugin_spec to_plugin_spec(const RopeSpec& spec) {
  ropecheck_plugin_spec s{};
  s.struct_size = sizeof s;
  s.head_dim = spec.head_dim;
  s.rotary_dim = spec.rotary_dim;
  s.layout = spec.layout == Layout::interleaved ? ROPECHECK_LAYOUT_INTERLEAVED
                                                : ROPECHECK_LAYOUT_HALF_SPLIT;
  switch (spec.angle_precision) {
    case AnglePrecision::fp32: s.angle_precision = ROPECHECK_ANGLES_FP32; break;
    case AnglePrecision::fp64: s.angle_precision = ROPECHECK_ANGLES_FP64; break;
    case AnglePrecision::fp32_recurrence: s.angle_precision = ROPECHECK_ANGLES_FP32_RECURRENCE; break;
  }
  s.base = spec.base;
  const RopeScaling& scaling = spec.scaling;
  const ScalingKind kind = scaling.kind;
  s.scaling_kind = static_cast<std::int32_t>(kind);
  s.attention_factor = attention_factor(spec);
  const ScalingParameters reads = parameters_read_by(kind);
  if (reads.factor) s.factor = scaling.factor;
  if (reads.original_max_position) s.original_max_position = scaling.original_max_position;
  if (reads.sequence_length) s.sequence_length = scaling.sequence_length;
  if (reads.yarn_ramp) {
    s.beta_fast = scaling.beta_fast;
    s.beta_slow = scaling.beta_slow;
    s.yarn_truncate = scaling.truncate ? 1 : 0;
  }
  if (reads.llama3_band) {
    s.low_freq_factor = scaling.low_freq_factor;
    s.high_freq_factor = scaling.high_freq_factor;
  }
  return s;  // the LongRoPE factor arrays travel in shared memory (call())
}

// The wait for a worker's exit or load: the fixed timeout, else the watchdog's base.
double worker_seconds(const PluginOptions& options) {
  return options.timeout_seconds > 0 ? options.timeout_seconds : kWatchdogBaseSeconds;
}

class PluginRope final : public RopeImpl, public PluginTimer {
 public:
  PluginRope(PluginInfo info, const PluginOptions& options, std::unique_ptr<GuardedBuffers> memory,
             std::unique_ptr<WorkerProcess> worker)
      : info_(std::move(info)), options_(options), memory_(std::move(memory)),
        worker_(std::move(worker)) {
    const auto& report = worker_->report();
    id_ = "plugin/" + info_.name;
    summary_ = report.summary[0] != '\0' ? std::string(report.summary)
                                         : fmt::format("plugin {}", info_.path.string());
    caps_ = to_capabilities(report);
  }

  std::string_view id() const override { return id_; }
  std::string_view summary() const override { return summary_; }
  RopeCapabilities capabilities() const override { return caps_; }
  const PluginInfo& info() const { return info_; }

  void stage(const RopeSpec& spec, StorageType storage, std::span<const std::byte> q, std::int64_t q_heads,
             std::span<const std::byte> k, std::int64_t k_heads, PositionIds positions) const override {
    const std::lock_guard lock(mutex_);
    const std::uint32_t dtype = storage == StorageType::fp32   ? ROPECHECK_DTYPE_FP32
                                : storage == StorageType::bf16 ? ROPECHECK_DTYPE_BF16
                                                               : ROPECHECK_DTYPE_FP16;
    stage_locked(dtype, spec, q, static_cast<std::int64_t>(positions.size()), q_heads, k, k_heads, positions);
  }

  WorkerTimedCall timed_call(WorkerProbe probe, int threads) const override {
    const std::lock_guard lock(mutex_);
    if (!staged_any_) throw std::logic_error("timed_call before stage");
    plugin_protocol::CallMessage message = staged_;
    message.probe = probe;
    message.threads = std::clamp(threads, 1, options_.threads);
    const auto reply = exchange_locked(message, "apply (timed in the worker)");
    return {reply.apply_seconds, reply.probe_seconds, reply.probe_passes};
  }

  void apply_at(const RopeSpec& spec, StorageType storage, std::span<std::byte> q, std::int64_t q_heads,
                std::span<std::byte> k, std::int64_t k_heads, PositionIds positions, int threads) const override {
    stage(spec, storage, q, q_heads, k, k_heads, positions);
    const std::lock_guard lock(mutex_);
    plugin_protocol::CallMessage message = staged_;
    message.threads = std::clamp(threads, 1, options_.threads);
    exchange_locked(message, "apply");
    copy_bytes(q.data(), memory_->data(GuardedBuffers::q), q.size());
    copy_bytes(k.data(), memory_->data(GuardedBuffers::k), k.size());
  }

 protected:
  void rotate_qk(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                 PositionIds positions) const override {
    if (caps_.storage == StorageType::fp32) {
      return call(ROPECHECK_DTYPE_FP32, "apply_f32", spec, q, k, positions);
    }
    // A 16-bit-only plugin: through its apply_bf16 / apply_fp16, as kernel_bf16 and kernel_fp16.
    rotate_qk_through_storage(caps_.storage, spec, q, k, positions);
  }
  void rotate_qk_bf16(const RopeSpec& spec, Bf16HeadTensor q, Bf16HeadTensor k,
                      PositionIds positions) const override {
    call(ROPECHECK_DTYPE_BF16, "apply_bf16", spec, q, k, positions);
  }
  void rotate_qk_fp16(const RopeSpec& spec, Fp16HeadTensor q, Fp16HeadTensor k,
                      PositionIds positions) const override {
    call(ROPECHECK_DTYPE_FP16, "apply_fp16", spec, q, k, positions);
  }

 private:
  template <typename Element>
  void call(std::uint32_t dtype, std::string_view function, const RopeSpec& spec,
            HeadTensorOf<Element> q, HeadTensorOf<Element> k, PositionIds positions) const {
    const std::lock_guard lock(mutex_);  // one worker, one request in flight
    if (info_.abi_version == ROPECHECK_PLUGIN_ABI_V2) function = "apply";  // one for every dtype
    stage_locked(dtype, spec, std::as_bytes(q.data), q.tokens, q.heads, std::as_bytes(k.data), k.heads, positions);
    exchange_locked(staged_, function);
    copy_bytes(q.data.data(), memory_->data(GuardedBuffers::q), q.data.size_bytes());
    copy_bytes(k.data.data(), memory_->data(GuardedBuffers::k), k.data.size_bytes());
  }

  // Copies q, k, positions and a LongRoPE spec's factors into the guarded shared memory and makes
  // the message of a call on them (staged_); the caller holds mutex_.
  void stage_locked(std::uint32_t dtype, const RopeSpec& spec, std::span<const std::byte> q, std::int64_t tokens,
                    std::int64_t q_heads, std::span<const std::byte> k, std::int64_t k_heads,
                    PositionIds positions) const {
    // LongRoPE's two factor arrays, one after the other; nothing for the other kinds.
    staged_factors_.clear();
    if (spec.scaling.kind == ScalingKind::longrope) {
      staged_factors_ = spec.scaling.short_factor;
      staged_factors_.insert(staged_factors_.end(), spec.scaling.long_factor.begin(), spec.scaling.long_factor.end());
    }
    staged_positions_.assign(positions.begin(), positions.end());
    staged_spec_ = spec;
    staged_any_ = true;
    staged_elements_ = (q.size() + k.size()) / (dtype == ROPECHECK_DTYPE_FP32 ? 4 : 2);
    const std::size_t factor_bytes = staged_factors_.size() * sizeof(double);
    memory_->prepare(q.size(), k.size(), positions.size_bytes(), factor_bytes);
    copy_bytes(memory_->data(GuardedBuffers::q), q.data(), q.size());
    copy_bytes(memory_->data(GuardedBuffers::k), k.data(), k.size());
    copy_bytes(memory_->data(GuardedBuffers::positions), positions.data(), positions.size_bytes());
    copy_bytes(memory_->data(GuardedBuffers::factors), staged_factors_.data(), factor_bytes);
    plugin_protocol::CallMessage& message = staged_;
    message = {};
    message.stage = ++stages_;  // a timed call copies a new stage's q and k (plugin_protocol.h)
    message.dtype = dtype;
    message.threads = options_.threads;
    message.spec = to_plugin_spec(spec);
    message.factors_offset = memory_->offset(GuardedBuffers::factors);
    message.factors_count = staged_factors_.size() / 2;
    message.tokens = tokens;
    message.q_heads = q_heads;
    message.k_heads = k_heads;
    message.file_bytes = memory_->file_bytes();
    message.q_offset = memory_->offset(GuardedBuffers::q);
    message.k_offset = memory_->offset(GuardedBuffers::k);
    message.positions_offset = memory_->offset(GuardedBuffers::positions);
  }

  // Sends a staged call and judges what came back: a crash, a hang, a write outside the buffers
  // or into what is read-only, an ERROR or unknown status (PluginFailure), UNSUPPORTED
  // (UnsupportedCase). The caller holds mutex_.
  plugin_protocol::ReplyMessage exchange_locked(const plugin_protocol::CallMessage& message,
                                                std::string_view function) const {
    const RopeSpec& spec = staged_spec_;
    // The watchdog: fixed by --plugin-timeout, or from the call's size.
    const double seconds = options_.timeout_seconds > 0 ? options_.timeout_seconds : watchdog_seconds(staged_elements_);
    plugin_protocol::ReplyMessage reply;
    try {
      if (!worker_) worker_ = restart();
      reply = worker_->exchange(message, function, seconds);
    } catch (const PluginHang& e) {
      worker_.reset();  // killed: the next call starts a fresh worker
      // The input that hung, in the message: the property harness reports it unshrunk.
      throw PluginHang(fmt::format("{}; the call: {}, tokens {}, q_heads {}, k_heads {}, positions {}",
                                   e.what(), describe(spec), message.tokens, message.q_heads, message.k_heads,
                                   positions_text(staged_positions_)));
    } catch (const PluginFailure&) {
      worker_.reset();  // spent: the next call starts a fresh worker
      throw;
    }
    std::string damage = memory_->damage();
    const auto read_only_changed = [&](GuardedBuffers::Buffer buffer, const void* original,
                                       std::size_t bytes, std::string_view name) {
      if (bytes == 0 || std::memcmp(memory_->data(buffer), original, bytes) == 0) return;
      damage += fmt::format("{}modified {} (read-only)", damage.empty() ? "" : "; ", name);
    };
    read_only_changed(GuardedBuffers::positions, staged_positions_.data(),
                      staged_positions_.size() * sizeof(std::int64_t), "positions");
    read_only_changed(GuardedBuffers::factors, staged_factors_.data(), staged_factors_.size() * sizeof(double),
                      "the LongRoPE factors");
    if (!damage.empty()) {
      worker_.reset();  // it scribbled on shared memory: trust nothing it holds
      throw PluginFailure(fmt::format("plugin {} ({})", damage, function));
    }
    if (reply.status == ROPECHECK_PLUGIN_UNSUPPORTED) {
      throw UnsupportedCase(fmt::format("plugin reported unsupported for {}", describe(spec)));
    }
    if (reply.status != ROPECHECK_PLUGIN_OK) {
      throw PluginFailure(reply.status == ROPECHECK_PLUGIN_ERROR
                              ? fmt::format("plugin returned ERROR ({})", function)
                              : fmt::format("plugin returned unknown status {} ({})", reply.status, function));
    }
    return reply;
  }

  // A new worker after a failure; one that no longer loads is a failure of this call.
  std::unique_ptr<WorkerProcess> restart() const {
    auto worker = std::make_unique<WorkerProcess>(info_.path, memory_->fd(), worker_seconds(options_),
                                                  options_.threads);
    if (auto why = judge(worker->report()); !why.empty()) {
      throw PluginFailure(fmt::format("plugin could not be restarted: {}", why));
    }
    return worker;
  }

  PluginInfo info_;
  PluginOptions options_;
  std::string id_;
  std::string summary_;
  RopeCapabilities caps_;
  mutable std::mutex mutex_;
  std::unique_ptr<GuardedBuffers> memory_;
  mutable std::unique_ptr<WorkerProcess> worker_;
  // The call now in the shared memory, and what its read-only inputs were (guarded by mutex_).
  mutable plugin_protocol::CallMessage staged_;
  mutable RopeSpec staged_spec_{};
  mutable std::vector<std::int64_t> staged_positions_;
  mutable std::vector<double> staged_factors_;
  mutable std::size_t staged_elements_ = 0;
  mutable bool staged_any_ = false;
  mutable std::uint64_t stages_ = 0;
};

}  // namespace

double watchdog_seconds(std::size_t elements) {
  return kWatchdogBaseSeconds + kWatchdogSecondsPerElement * static_cast<double>(elements);
}

std::unique_ptr<RopeImpl> load_plugin(const std::filesystem::path& path,
                                      const PluginOptions& options) {
  if (!(options.timeout_seconds >= 0) || !std::isfinite(options.timeout_seconds)) {
    throw InvalidInput(fmt::format("--plugin-timeout must be a number of seconds >= 0 (0: from "
                                   "each call's size), got {}",
                                   options.timeout_seconds));
  }
  if (options.threads < 1 || options.threads > kMaxPluginThreads) {
    throw InvalidInput(fmt::format("--plugin-threads must be 1 to {}, got {}", kMaxPluginThreads,
                                   options.threads));
  }
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
    worker = std::make_unique<WorkerProcess>(absolute, memory->fd(), worker_seconds(options),
                                             options.threads);
  } catch (const PluginFailure& e) {
    throw InvalidInput(fmt::format("plugin '{}' failed while loading: {}", path.string(), e.what()));
  }
  if (auto why = judge(worker->report()); !why.empty()) {
    throw InvalidInput(fmt::format("plugin '{}' {}", path.string(), why));
  }
  PluginInfo info;
  info.path = absolute;
  info.name = worker->report().name;
  info.abi_version = worker->report().abi_version;
  info.dtypes = worker->report().caps.dtypes;
  info.max_head_dim = worker->report().caps.max_head_dim;
  info.description = worker->report().description;
  return std::make_unique<PluginRope>(std::move(info), options, std::move(memory), std::move(worker));
}

const PluginInfo* plugin_info(const RopeImpl& impl) {
  const auto* plugin = dynamic_cast<const PluginRope*>(&impl);
  return plugin != nullptr ? &plugin->info() : nullptr;
}

const PluginTimer* plugin_timer(const RopeImpl& impl) { return dynamic_cast<const PluginRope*>(&impl); }

}  // namespace ropecheck
