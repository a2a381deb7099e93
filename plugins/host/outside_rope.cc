// OutsideRope (outside_rope.h): the staging of a call into the guarded shared memory, the
// judging of what came back, and PluginTimer for bench, for a plugin and a Python callable alike.
#include "plugins/host/outside_rope.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/errors.h"
#include "core/frequency.h"
#include "core/position_axes.h"
#include "core/scaling_parameters.h"
#include "ropecheck/plugin.h"

namespace ropecheck {
namespace {

// What a multi-axis token's positions are, as counterexamples name them: "(t,h,w)" (mrope, imrope),
// "(row,column)" (vision), "" for one axis.
std::string axis_names(int axes) { return axes == 3 ? "(t,h,w)" : axes == 2 ? "(row,column)" : ""; }

// "positions [0, 7, 4096]", the first 16 and a count beyond them; a multi-axis call's one tuple a
// token, named by its axes: "positions (t,h,w) [(0,0,0), (1,3,5)]".
std::string positions_text(PositionIds positions, int axes) {
  constexpr std::size_t kShown = 16;
  const auto per_token = static_cast<std::size_t>(axes);
  const std::size_t tokens = positions.size() / per_token;
  const std::size_t shown = std::min(tokens, kShown);
  std::vector<std::string> items;
  for (std::size_t t = 0; t < shown; ++t) {
    const auto token = positions.subspan(t * per_token, per_token);
    items.push_back(axes == 1 ? fmt::format("{}", token[0]) : fmt::format("({})", fmt::join(token, ",")));
  }
  std::string text = fmt::format("positions {}{}[{}", axis_names(axes), axes == 1 ? "" : " ", fmt::join(items, ", "));
  if (tokens > shown) text += fmt::format(", ... {} {} in all", tokens, axes == 1 ? "positions" : "tokens");
  return text + "]";
}

// The ABI's axis modes are AxisMode's values (position_axes.h), passed through by a cast.
static_assert(ROPECHECK_AXES_NONE == static_cast<int>(AxisMode::none));
static_assert(ROPECHECK_AXES_MROPE == static_cast<int>(AxisMode::mrope));
static_assert(ROPECHECK_AXES_IMROPE == static_cast<int>(AxisMode::imrope));
static_assert(ROPECHECK_AXES_VISION == static_cast<int>(AxisMode::vision));

class OutsideRope final : public RopeImpl, public PluginTimer {
 public:
  OutsideRope(OutsideIdentity identity, const PluginOptions& options, std::unique_ptr<GuardedBuffers> memory,
              std::unique_ptr<CallServer> worker, CallServerFactory restart)
      : identity_(std::move(identity)), options_(options), memory_(std::move(memory)),
        worker_(std::move(worker)), restart_(std::move(restart)) {}

  std::string_view id() const override { return identity_.id; }
  std::string_view summary() const override { return identity_.summary; }
  RopeCapabilities capabilities() const override { return identity_.capabilities; }
  const OutsideIdentity& identity() const { return identity_; }

  void stage(const RopeSpec& spec, StorageType storage, std::span<const std::byte> q, std::int64_t q_heads,
             std::span<const std::byte> k, std::int64_t k_heads, PositionIds positions) const override {
    const std::lock_guard lock(mutex_);
    const std::uint32_t dtype = storage == StorageType::fp32   ? ROPECHECK_DTYPE_FP32
                                : storage == StorageType::bf16 ? ROPECHECK_DTYPE_BF16
                                                               : ROPECHECK_DTYPE_FP16;
    // positions holds axis_count(spec) entries per token (position_axes.h).
    const auto tokens = static_cast<std::int64_t>(positions.size()) / axis_count(spec);
    stage_locked(dtype, spec, q, tokens, q_heads, k, k_heads, positions);
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
    rotate_qk_threads(spec, q, k, positions, 1);
  }
  // The thread count goes to the plugin (call->threads): it splits the work itself.
  void rotate_qk_threads(const RopeSpec& spec, HeadTensor q, HeadTensor k, PositionIds positions,
                         int threads) const override {
    const std::lock_guard lock(call_mutex_);
    call_threads_ = threads;
    if (identity_.capabilities.storage == StorageType::fp32) {
      return call(ROPECHECK_DTYPE_FP32, "apply_f32", spec, q, k, positions);
    }
    // A 16-bit-only subject: through its bf16 / fp16 apply, as kernel_bf16 and kernel_fp16.
    rotate_qk_through_storage(identity_.capabilities.storage, spec, q, k, positions);
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
    const auto* plugin = std::get_if<PluginInfo>(&identity_.info);
    // An ABI 2 or 3 plugin and a Python function have one apply for every dtype.
    if (plugin == nullptr || plugin->abi_version != ROPECHECK_PLUGIN_ABI_V1) function = "apply";
    if (spec.pass == Pass::backward) function = "apply_backward";  // ABI 4's (the Python door's backward)
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
    message.threads = call_threads_;
    message.spec = to_plugin_spec(spec);
    message.axes = axis_count(spec);
    message.backward = spec.pass == Pass::backward ? 1 : 0;
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
    const std::string& noun = identity_.noun;
    // The watchdog: fixed by --plugin-timeout, or from the call's size.
    const double seconds = options_.timeout_seconds > 0 ? options_.timeout_seconds : watchdog_seconds(staged_elements_);
    plugin_protocol::ReplyMessage reply;
    try {
      if (!worker_) worker_ = restart_();
      reply = worker_->exchange(message, function, seconds);
    } catch (const PluginHang& e) {
      worker_.reset();  // killed: the next call starts a fresh worker
      // The input that hung, in the message: the property harness reports it unshrunk.
      throw PluginHang(fmt::format("{}; the call: {}, tokens {}, q_heads {}, k_heads {}, {}", e.what(),
                                   describe(spec), message.tokens, message.q_heads, message.k_heads,
                                   positions_text(staged_positions_, message.axes)));
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
                      staged_positions_.size() * sizeof(std::int64_t),
                      fmt::format("positions{}", message.axes == 1 ? "" : " " + axis_names(message.axes)));
    read_only_changed(GuardedBuffers::factors, staged_factors_.data(), staged_factors_.size() * sizeof(double),
                      "the LongRoPE factors");
    if (!damage.empty()) {
      worker_.reset();  // it scribbled on shared memory: trust nothing it holds
      throw PluginFailure(fmt::format("{} {} ({})", noun, damage, function));
    }
    if (reply.status == ROPECHECK_PLUGIN_UNSUPPORTED) {
      throw UnsupportedCase(fmt::format("{} reported unsupported for {}", noun, describe(spec)));
    }
    if (reply.status != ROPECHECK_PLUGIN_OK) {
      const std::string detail = worker_->error_detail();
      throw PluginFailure(!detail.empty() ? fmt::format("{} raised {}", noun, detail)
                          : reply.status == ROPECHECK_PLUGIN_ERROR
                              ? fmt::format("{} returned ERROR ({})", noun, function)
                              : fmt::format("{} returned unknown status {} ({})", noun, reply.status, function));
    }
    return reply;
  }

  OutsideIdentity identity_;
  PluginOptions options_;
  // The thread count of the apply in progress (1 to max_threads), read by stage_locked: held
  // under call_mutex_ for the whole call, 16-bit storage's round trip included.
  mutable std::mutex call_mutex_;
  mutable int call_threads_ = 1;
  mutable std::mutex mutex_;
  std::unique_ptr<GuardedBuffers> memory_;
  mutable std::unique_ptr<CallServer> worker_;
  CallServerFactory restart_;
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

// Each scaling parameter is set for the kinds that read it, zero otherwise (plugin.h), and the
// attention factor is resolved here, as frequency.h resolves it.
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
  // ABI 3's axes (the worker hides them from an ABI 2 plugin, which only ever gets none).
  s.axis_mode = static_cast<std::int32_t>(spec.axes.mode);
  for (int a = 0; a < kMaxAxes; ++a) s.sections[a] = spec.axes.sections[static_cast<std::size_t>(a)];
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

std::unique_ptr<RopeImpl> make_outside_rope(OutsideIdentity identity, const PluginOptions& options,
                                            std::unique_ptr<GuardedBuffers> memory,
                                            std::unique_ptr<CallServer> first, CallServerFactory restart) {
  identity.capabilities.out_of_process = true;  // every call goes to the worker child
  return std::make_unique<OutsideRope>(std::move(identity), options, std::move(memory), std::move(first),
                                       std::move(restart));
}

bool valid_subject_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.';
  });
}

const OutsideIdentity* outside_identity(const RopeImpl& impl) {
  const auto* outside = dynamic_cast<const OutsideRope*>(&impl);
  return outside != nullptr ? &outside->identity() : nullptr;
}

const PluginTimer* plugin_timer(const RopeImpl& impl) { return dynamic_cast<const OutsideRope*>(&impl); }

}  // namespace ropecheck
