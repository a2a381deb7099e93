// PluginRopeForm (plugin_rope_form.h): an ABI 6 form call staged into the guarded shared memory,
// served by the plugin's worker, judged (guards, read-only inputs, status) and copied back.
#include "plugins/host/plugin_rope_form.h"

#include <fmt/format.h>

#include <cstring>
#include <mutex>
#include <vector>

#include "core/errors.h"
#include "core/spec.h"

namespace ropecheck {
namespace {

// The ABI's values are rope_form.h's enumerators, in their order: a cast maps them.
static_assert(ROPECHECK_ANGLE_SOURCE_SPEC == static_cast<int>(AngleSource::spec));
static_assert(ROPECHECK_ANGLE_SOURCE_COS_SIN_CACHE == static_cast<int>(AngleSource::cos_sin_cache));
static_assert(ROPECHECK_NORM_WEIGHT_PLAIN == static_cast<int>(NormWeight::plain));
static_assert(ROPECHECK_NORM_WEIGHT_ONE_PLUS == static_cast<int>(NormWeight::one_plus));
static_assert(ROPECHECK_NORM_FP32 == static_cast<int>(NormPrecision::fp32));
static_assert(ROPECHECK_NORM_STORAGE == static_cast<int>(NormPrecision::storage));

constexpr std::uint32_t kFormDtypes = ROPECHECK_DTYPE_FP32 | ROPECHECK_DTYPE_BF16 | ROPECHECK_DTYPE_FP16;
constexpr std::uint32_t kFormAngleSources =
    (1u << ROPECHECK_ANGLE_SOURCE_SPEC) | (1u << ROPECHECK_ANGLE_SOURCE_COS_SIN_CACHE);
constexpr std::uint32_t kFormNormWeights = (1u << ROPECHECK_NORM_WEIGHT_PLAIN) | (1u << ROPECHECK_NORM_WEIGHT_ONE_PLUS);

std::uint32_t dtype_bit(StorageType storage) {
  switch (storage) {
    case StorageType::fp32: return ROPECHECK_DTYPE_FP32;
    case StorageType::bf16: return ROPECHECK_DTYPE_BF16;
    case StorageType::fp16: return ROPECHECK_DTYPE_FP16;
  }
  return 0;
}

ropecheck_plugin_head_view to_plugin_view(const HeadView& view) {
  return {view.heads, view.offset, view.token_stride, view.head_stride};
}

class PluginRopeForm final : public RopeFormImpl {
 public:
  PluginRopeForm(OutsideIdentity identity, RopeFormCapabilities capabilities, const PluginOptions& options,
                 std::unique_ptr<GuardedBuffers> memory, CallServerFactory start)
      : identity_(std::move(identity)), capabilities_(std::move(capabilities)), options_(options),
        memory_(std::move(memory)), start_(std::move(start)) {}

  std::string_view id() const override { return identity_.id; }
  std::string_view summary() const override { return identity_.summary; }
  RopeFormCapabilities capabilities() const override { return capabilities_; }
  // The form call rotates as the plugin's RoPE side declares, forward, on one axis (plugin.h).
  RopeCapabilities rope_capabilities() const override {
    RopeCapabilities caps = identity_.capabilities;
    caps.passes = {Pass::forward};
    caps.axis_modes = {AxisMode::none};
    return caps;
  }
  const PluginInfo* info() const { return std::get_if<PluginInfo>(&identity_.info); }

 protected:
  void run(const RopeFormCall& call) const override {
    const std::lock_guard lock(mutex_);  // one worker, one request in flight
    stage(call);
    exchange(call);
    copy_bytes(call.buffer.data(), memory_->data(GuardedBuffers::form_buffer), call.buffer.size());
  }

 private:
  // Copies the buffer and every read-only input into the guarded shared memory and makes the
  // message.
  void stage(const RopeFormCall& call) const {
    factors_.clear();
    if (call.spec.scaling.kind == ScalingKind::longrope) {
      factors_ = call.spec.scaling.short_factor;
      factors_.insert(factors_.end(), call.spec.scaling.long_factor.begin(), call.spec.scaling.long_factor.end());
    }
    const bool has_k = call.k.heads > 0;
    weights_.clear();
    if (call.has_norm) {
      weights_.assign(call.q_weight.begin(), call.q_weight.end());
      if (has_k) weights_.insert(weights_.end(), call.k_weight.begin(), call.k_weight.end());
    }
    std::size_t bytes[GuardedBuffers::kBuffers] = {};
    bytes[GuardedBuffers::positions] = call.positions.size_bytes();
    bytes[GuardedBuffers::factors] = factors_.size() * sizeof(double);
    bytes[GuardedBuffers::form_buffer] = call.buffer.size();
    bytes[GuardedBuffers::cos_sin_cache] = call.cos_sin_cache.size_bytes();
    bytes[GuardedBuffers::norm_weights] = weights_.size() * sizeof(float);
    memory_->prepare_all(bytes);
    copy_bytes(memory_->data(GuardedBuffers::positions), call.positions.data(), bytes[GuardedBuffers::positions]);
    copy_bytes(memory_->data(GuardedBuffers::factors), factors_.data(), bytes[GuardedBuffers::factors]);
    copy_bytes(memory_->data(GuardedBuffers::form_buffer), call.buffer.data(), bytes[GuardedBuffers::form_buffer]);
    copy_bytes(memory_->data(GuardedBuffers::cos_sin_cache), call.cos_sin_cache.data(),
               bytes[GuardedBuffers::cos_sin_cache]);
    copy_bytes(memory_->data(GuardedBuffers::norm_weights), weights_.data(), bytes[GuardedBuffers::norm_weights]);
    plugin_protocol::CallMessage& m = message_;
    m = {};
    m.rope_form = 1;
    m.dtype = dtype_bit(call.storage);
    m.threads = call.threads;
    m.spec = to_plugin_spec(call.spec);
    m.tokens = call.tokens;
    m.q_heads = call.q.heads;
    m.k_heads = call.k.heads;
    m.file_bytes = memory_->file_bytes();
    m.positions_offset = memory_->offset(GuardedBuffers::positions);
    m.factors_offset = memory_->offset(GuardedBuffers::factors);
    m.factors_count = factors_.size() / 2;
    plugin_protocol::FormCallMessage& f = m.form;
    f.q = to_plugin_view(call.q);
    f.k = has_k ? to_plugin_view(call.k) : ropecheck_plugin_head_view{};
    f.elements = call.elements();
    f.angle_source = static_cast<std::int32_t>(call.angles);
    f.cache_rows = call.angles == AngleSource::cos_sin_cache ? call.cache_rows : 0;
    f.has_norm = call.has_norm ? 1 : 0;
    if (call.has_norm) {
      f.norm.struct_size = sizeof f.norm;
      f.norm.weight = static_cast<std::int32_t>(call.norm.weight);
      f.norm.precision = static_cast<std::int32_t>(call.norm.precision);
      f.norm.eps = call.norm.eps;
    }
    f.buffer_offset = memory_->offset(GuardedBuffers::form_buffer);
    f.cache_offset = memory_->offset(GuardedBuffers::cos_sin_cache);
    f.weights_offset = memory_->offset(GuardedBuffers::norm_weights);
    // The watchdog: fixed by --plugin-timeout, or from every element the call reads or writes.
    elements_ = static_cast<std::size_t>(call.elements()) + call.cos_sin_cache.size() + weights_.size();
  }

  // Sends the staged call and judges what came back, as the fused call's host does: a crash, a
  // hang, a write outside the buffer or into what is read-only, ERROR or an unknown status
  // (PluginFailure), UNSUPPORTED (UnsupportedCase).
  void exchange(const RopeFormCall& call) const {
    const double seconds = options_.timeout_seconds > 0 ? options_.timeout_seconds : watchdog_seconds(elements_);
    plugin_protocol::ReplyMessage reply;
    try {
      if (!worker_) worker_ = start_();
      reply = worker_->exchange(message_, "apply_rope_form", seconds);
    } catch (const PluginHang& e) {
      worker_.reset();  // killed: the next call starts a fresh worker
      throw PluginHang(fmt::format("{}; the call: {}", e.what(), describe(call)));
    } catch (const PluginFailure& e) {
      worker_.reset();
      throw PluginFailure(fmt::format("{}; the call: {}", e.what(), describe(call)));
    }
    std::string damage = memory_->damage();
    const auto read_only_changed = [&](GuardedBuffers::Buffer buffer, const void* original, std::size_t bytes,
                                       std::string_view name) {
      if (bytes == 0 || std::memcmp(memory_->data(buffer), original, bytes) == 0) return;
      damage += fmt::format("{}modified {} (read-only)", damage.empty() ? "" : "; ", name);
    };
    read_only_changed(GuardedBuffers::positions, call.positions.data(), call.positions.size_bytes(), "positions");
    read_only_changed(GuardedBuffers::factors, factors_.data(), factors_.size() * sizeof(double), "the LongRoPE factors");
    read_only_changed(GuardedBuffers::cos_sin_cache, call.cos_sin_cache.data(), call.cos_sin_cache.size_bytes(),
                      "the cos/sin cache");
    read_only_changed(GuardedBuffers::norm_weights, weights_.data(), weights_.size() * sizeof(float),
                      "the norm weights");
    if (!damage.empty()) {
      worker_.reset();  // it scribbled on shared memory: trust nothing it holds
      throw PluginFailure(fmt::format("plugin {} (apply_rope_form); the call: {}", damage, describe(call)));
    }
    throw_unless_ok(reply.status, "apply_rope_form", describe(call));
  }

  OutsideIdentity identity_;
  RopeFormCapabilities capabilities_;
  PluginOptions options_;
  mutable std::mutex mutex_;
  std::unique_ptr<GuardedBuffers> memory_;
  CallServerFactory start_;
  mutable std::unique_ptr<CallServer> worker_;  // started on the first call, after a failure again
  // The call now in the shared memory (guarded by mutex_).
  mutable plugin_protocol::CallMessage message_;
  mutable std::vector<double> factors_;
  mutable std::vector<float> weights_;
  mutable std::size_t elements_ = 0;
};

}  // namespace

std::string judge_form_capabilities(const ropecheck_plugin_form_capabilities& caps) {
  if (caps.dtypes == 0 || (caps.dtypes & ~kFormDtypes) != 0) {
    return fmt::format("form capabilities: dtypes mask {:#x} (ROPECHECK_DTYPE_FP32, _BF16, _FP16)", caps.dtypes);
  }
  if (caps.angle_sources == 0 || (caps.angle_sources & ~kFormAngleSources) != 0) {
    return fmt::format("form capabilities: angle_sources mask {:#x} (bits 0 spec, 1 cos_sin_cache)", caps.angle_sources);
  }
  if ((caps.norm_weights & ~kFormNormWeights) != 0) {
    return fmt::format("form capabilities: norm_weights mask {:#x} (bits 0 plain, 1 one_plus; 0: no QK-norm)",
                       caps.norm_weights);
  }
  if (caps.norm_precision != ROPECHECK_NORM_FP32 && caps.norm_precision != ROPECHECK_NORM_STORAGE) {
    return fmt::format("form capabilities: norm_precision {} (0 fp32, 1 storage)", caps.norm_precision);
  }
  if (caps.plain_calls == 0 && caps.norm_weights == 0) {
    return "form capabilities: neither plain_calls nor a norm weight: no call could be made";
  }
  return {};
}

RopeFormCapabilities to_rope_form_capabilities(const ropecheck_plugin_form_capabilities& caps) {
  RopeFormCapabilities out;
  out.storages.clear();
  for (const StorageType storage : {StorageType::fp32, StorageType::bf16, StorageType::fp16}) {
    if ((caps.dtypes & dtype_bit(storage)) != 0) out.storages.push_back(storage);
  }
  out.angle_sources.clear();
  for (const AngleSource source : {AngleSource::spec, AngleSource::cos_sin_cache}) {
    if ((caps.angle_sources & (1u << static_cast<int>(source))) != 0) out.angle_sources.push_back(source);
  }
  out.strided = caps.strided != 0;
  out.k_optional = caps.k_optional != 0;
  out.plain_calls = caps.plain_calls != 0;
  for (const NormWeight weight : {NormWeight::plain, NormWeight::one_plus}) {
    if ((caps.norm_weights & (1u << static_cast<int>(weight))) != 0) out.norm_weights.push_back(weight);
  }
  out.norm_precision = static_cast<NormPrecision>(caps.norm_precision);
  return out;
}

std::unique_ptr<RopeFormImpl> make_plugin_rope_form(OutsideIdentity identity, RopeFormCapabilities capabilities,
                                                    const PluginOptions& options,
                                                    std::unique_ptr<GuardedBuffers> memory,
                                                    CallServerFactory start) {
  return std::make_unique<PluginRopeForm>(std::move(identity), std::move(capabilities), options, std::move(memory),
                                          std::move(start));
}

const PluginInfo* plugin_info(const RopeFormImpl& impl) {
  const auto* plugin = dynamic_cast<const PluginRopeForm*>(&impl);
  return plugin != nullptr ? plugin->info() : nullptr;
}

}  // namespace ropecheck
