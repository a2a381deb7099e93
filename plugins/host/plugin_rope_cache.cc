// PluginRopeCache (plugin_rope_cache.h): an ABI 5 fused call staged into the guarded shared
// memory, served by the plugin's worker, judged (guards, read-only inputs, status) and copied back.
#include "plugins/host/plugin_rope_cache.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/errors.h"
#include "core/position_axes.h"
#include "core/spec.h"

namespace ropecheck {
namespace {

// The ABI's cache values are kv_cache.h's enumerators, in their order: a cast maps them.
static_assert(ROPECHECK_CACHE_NHD == static_cast<int>(CacheLayout::nhd));
static_assert(ROPECHECK_CACHE_HND == static_cast<int>(CacheLayout::hnd));
static_assert(ROPECHECK_CACHE_MLA == static_cast<int>(CacheLayout::mla));
static_assert(ROPECHECK_CACHE_FP32 == static_cast<int>(CacheStorage::fp32));
static_assert(ROPECHECK_CACHE_BF16 == static_cast<int>(CacheStorage::bf16));
static_assert(ROPECHECK_CACHE_FP16 == static_cast<int>(CacheStorage::fp16));
static_assert(ROPECHECK_CACHE_FP8_E4M3 == static_cast<int>(CacheStorage::fp8_e4m3));
static_assert(ROPECHECK_CACHE_FP8_E5M2 == static_cast<int>(CacheStorage::fp8_e5m2));
static_assert(ROPECHECK_SCALE_MULTIPLY == static_cast<int>(ScaleDirection::multiply));
static_assert(ROPECHECK_SCALE_DIVIDE == static_cast<int>(ScaleDirection::divide));
static_assert(ROPECHECK_PADDING_SKIP_TOKEN == static_cast<int>(PaddingRule::skip_token));
static_assert(ROPECHECK_PADDING_ROTATE_Q_ONLY == static_cast<int>(PaddingRule::rotate_q_only));

constexpr std::uint32_t kKnownCacheLayouts = (1u << (ROPECHECK_CACHE_MLA + 1)) - 1;
constexpr std::uint32_t kKnownCacheStorages = (1u << (ROPECHECK_CACHE_FP8_E5M2 + 1)) - 1;
constexpr std::uint32_t kFp8Storages = (1u << ROPECHECK_CACHE_FP8_E4M3) | (1u << ROPECHECK_CACHE_FP8_E5M2);
constexpr std::uint32_t kKnownDirections = (1u << ROPECHECK_SCALE_MULTIPLY) | (1u << ROPECHECK_SCALE_DIVIDE);


ropecheck_plugin_cache to_plugin_cache(const KvCacheSpec& c) {
  ropecheck_plugin_cache cache{};
  cache.struct_size = sizeof cache;
  cache.layout = static_cast<std::int32_t>(c.layout);
  cache.storage = static_cast<std::int32_t>(c.storage);
  cache.scale_direction = is_fp8(c.storage) ? static_cast<std::int32_t>(c.scale_direction) : 0;
  cache.padding = static_cast<std::int32_t>(c.padding);
  cache.blocks = c.blocks;
  cache.block_size = c.block_size;
  cache.kv_heads = c.kv_heads;
  cache.head_dim = c.head_dim;
  cache.latent_dim = c.latent_dim;
  cache.k_scale_count = static_cast<std::int64_t>(c.k_scale.size());
  cache.v_scale_count = static_cast<std::int64_t>(c.v_scale.size());
  return cache;  // the scale pointers: set by the worker, into its mapping
}

class PluginRopeCache final : public RopeCacheImpl {
 public:
  PluginRopeCache(OutsideIdentity identity, RopeCacheCapabilities capabilities, const PluginOptions& options,
                  std::unique_ptr<GuardedBuffers> memory, CallServerFactory start)
      : identity_(std::move(identity)), capabilities_(std::move(capabilities)), options_(options),
        memory_(std::move(memory)), start_(std::move(start)) {}

  std::string_view id() const override { return identity_.id; }
  std::string_view summary() const override { return identity_.summary; }
  RopeCacheCapabilities capabilities() const override { return capabilities_; }
  // The fused call rotates as the plugin's RoPE side declares: the properties draw within it.
  RopeCapabilities rope_capabilities() const override {
    RopeCapabilities caps = identity_.capabilities;
    caps.passes = {Pass::forward};
    return caps;
  }
  const PluginInfo* info() const { return std::get_if<PluginInfo>(&identity_.info); }

 protected:
  void run(const RopeCacheCall& call) const override {
    // The rotation stays within what the plugin's RoPE side declares (plugin.h).
    if (const std::string why = identity_.capabilities.why_unsupported(call.spec); !why.empty()) {
      throw UnsupportedCase(fmt::format("{} (fused): {}", identity_.id, why));
    }
    const std::lock_guard lock(mutex_);  // one worker, one request in flight
    stage(call);
    exchange(call);
    copy_bytes(call.q.data(), memory_->data(GuardedBuffers::q), call.q.size_bytes());
    copy_bytes(call.k_cache.data(), memory_->data(GuardedBuffers::k_cache), call.k_cache.size());
    copy_bytes(call.v_cache.data(), memory_->data(GuardedBuffers::v_cache), call.v_cache.size());
  }

 private:
  // Copies every buffer of the call into the guarded shared memory and makes its message.
  void stage(const RopeCacheCall& call) const {
    const KvCacheSpec& c = call.cache;
    factors_.clear();
    if (call.spec.scaling.kind == ScalingKind::longrope) {
      factors_ = call.spec.scaling.short_factor;
      factors_.insert(factors_.end(), call.spec.scaling.long_factor.begin(), call.spec.scaling.long_factor.end());
    }
    scales_ = c.k_scale;
    scales_.insert(scales_.end(), c.v_scale.begin(), c.v_scale.end());
    std::size_t bytes[GuardedBuffers::kBuffers] = {};
    bytes[GuardedBuffers::q] = call.q.size_bytes();
    bytes[GuardedBuffers::k] = call.k.size_bytes();
    bytes[GuardedBuffers::positions] = call.positions.size_bytes();
    bytes[GuardedBuffers::factors] = factors_.size() * sizeof(double);
    bytes[GuardedBuffers::v] = call.v.size_bytes();
    bytes[GuardedBuffers::slots] = call.slots.size_bytes();
    bytes[GuardedBuffers::k_cache] = call.k_cache.size();
    bytes[GuardedBuffers::v_cache] = call.v_cache.size();
    bytes[GuardedBuffers::scales] = scales_.size() * sizeof(float);
    memory_->prepare_all(bytes);
    const void* from[GuardedBuffers::kBuffers] = {call.q.data(),     call.k.data(),       call.positions.data(),
                                                  factors_.data(),   call.v.data(),       call.slots.data(),
                                                  call.k_cache.data(), call.v_cache.data(), scales_.data()};
    for (int b = 0; b < GuardedBuffers::kBuffers; ++b) {
      copy_bytes(memory_->data(static_cast<GuardedBuffers::Buffer>(b)), from[b], bytes[b]);
    }
    plugin_protocol::CallMessage& m = message_;
    m = {};
    m.rope_cache = 1;
    m.dtype = ROPECHECK_DTYPE_FP32;
    m.threads = 1;
    m.spec = to_plugin_spec(call.spec);
    m.axes = axis_count(call.spec);
    m.tokens = call.tokens;
    m.q_heads = call.q_heads;
    m.k_heads = c.kv_heads;
    m.file_bytes = memory_->file_bytes();
    m.q_offset = memory_->offset(GuardedBuffers::q);
    m.k_offset = memory_->offset(GuardedBuffers::k);
    m.positions_offset = memory_->offset(GuardedBuffers::positions);
    m.factors_offset = memory_->offset(GuardedBuffers::factors);
    m.factors_count = factors_.size() / 2;
    m.cache.cache = to_plugin_cache(c);
    m.cache.v_offset = memory_->offset(GuardedBuffers::v);
    m.cache.slots_offset = memory_->offset(GuardedBuffers::slots);
    m.cache.k_cache_offset = memory_->offset(GuardedBuffers::k_cache);
    m.cache.v_cache_offset = memory_->offset(GuardedBuffers::v_cache);
    m.cache.scales_offset = memory_->offset(GuardedBuffers::scales);
    // The watchdog: fixed by --plugin-timeout, or from every element the call reads or writes.
    elements_ = call.q.size() + call.k.size() + call.v.size() + static_cast<std::size_t>(2 * cache_elements(c));
  }

  // Sends the staged call and judges what came back, as OutsideRope does for apply: a crash, a
  // hang, a write outside the buffers or into what is read-only, ERROR or an unknown status
  // (PluginFailure), UNSUPPORTED (UnsupportedCase).
  void exchange(const RopeCacheCall& call) const {
    const double seconds = options_.timeout_seconds > 0 ? options_.timeout_seconds : watchdog_seconds(elements_);
    plugin_protocol::ReplyMessage reply;
    try {
      if (!worker_) worker_ = start_();
      reply = worker_->exchange(message_, "apply_rope_cache", seconds);
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
    read_only_changed(GuardedBuffers::k, call.k.data(), call.k.size_bytes(), "k");
    read_only_changed(GuardedBuffers::v, call.v.data(), call.v.size_bytes(), "v");
    read_only_changed(GuardedBuffers::positions, call.positions.data(), call.positions.size_bytes(), "positions");
    read_only_changed(GuardedBuffers::factors, factors_.data(), factors_.size() * sizeof(double), "the LongRoPE factors");
    read_only_changed(GuardedBuffers::slots, call.slots.data(), call.slots.size_bytes(), "slots");
    read_only_changed(GuardedBuffers::scales, scales_.data(), scales_.size() * sizeof(float), "the FP8 scales");
    if (!damage.empty()) {
      worker_.reset();  // it scribbled on shared memory: trust nothing it holds
      throw PluginFailure(fmt::format("plugin {} (apply_rope_cache); the call: {}", damage, describe(call)));
    }
    throw_unless_ok(reply.status, "apply_rope_cache", describe(call));
  }

  OutsideIdentity identity_;
  RopeCacheCapabilities capabilities_;
  PluginOptions options_;
  mutable std::mutex mutex_;
  std::unique_ptr<GuardedBuffers> memory_;
  CallServerFactory start_;
  mutable std::unique_ptr<CallServer> worker_;  // started on the first call, after a failure again
  // The call now in the shared memory (guarded by mutex_).
  mutable plugin_protocol::CallMessage message_;
  mutable std::vector<double> factors_;
  mutable std::vector<float> scales_;
  mutable std::size_t elements_ = 0;
};

}  // namespace

std::string judge_rope_cache_capabilities(const ropecheck_plugin_cache_capabilities& caps) {
  if (caps.layouts == 0 || (caps.layouts & ~kKnownCacheLayouts) != 0) {
    return fmt::format("rope cache capabilities: layouts mask {:#x} (bits 0 nhd, 1 hnd, 2 mla)", caps.layouts);
  }
  if (caps.storages == 0 || (caps.storages & ~kKnownCacheStorages) != 0) {
    return fmt::format("rope cache capabilities: storages mask {:#x} (bits 0 fp32, 1 bf16, 2 fp16, 3 fp8_e4m3, "
                       "4 fp8_e5m2)",
                       caps.storages);
  }
  if ((caps.scale_directions & ~kKnownDirections) != 0 ||
      ((caps.storages & kFp8Storages) != 0 && caps.scale_directions == 0)) {
    return fmt::format("rope cache capabilities: scale_directions mask {:#x} (bits 0 multiply, 1 divide; at least "
                       "one with an FP8 storage)",
                       caps.scale_directions);
  }
  if (caps.padding != ROPECHECK_PADDING_SKIP_TOKEN && caps.padding != ROPECHECK_PADDING_ROTATE_Q_ONLY) {
    return fmt::format("rope cache capabilities: padding {} (0 skip_token, 1 rotate_q_only)", caps.padding);
  }
  return {};
}

RopeCacheCapabilities to_rope_cache_capabilities(const ropecheck_plugin_cache_capabilities& caps) {
  RopeCacheCapabilities out;
  for (const CacheLayout layout : {CacheLayout::nhd, CacheLayout::hnd, CacheLayout::mla}) {
    if ((caps.layouts & (1u << static_cast<int>(layout))) != 0) out.layouts.push_back(layout);
  }
  for (const CacheStorage storage : {CacheStorage::fp32, CacheStorage::bf16, CacheStorage::fp16,
                                     CacheStorage::fp8_e4m3, CacheStorage::fp8_e5m2}) {
    if ((caps.storages & (1u << static_cast<int>(storage))) != 0) out.storages.push_back(storage);
  }
  for (const ScaleDirection direction : {ScaleDirection::multiply, ScaleDirection::divide}) {
    if ((caps.scale_directions & (1u << static_cast<int>(direction))) != 0) out.directions.push_back(direction);
  }
  out.padding = static_cast<PaddingRule>(caps.padding);
  return out;
}

std::unique_ptr<RopeCacheImpl> make_plugin_rope_cache(OutsideIdentity identity, RopeCacheCapabilities capabilities,
                                                      const PluginOptions& options,
                                                      std::unique_ptr<GuardedBuffers> memory,
                                                      CallServerFactory start) {
  return std::make_unique<PluginRopeCache>(std::move(identity), std::move(capabilities), options, std::move(memory),
                                           std::move(start));
}

const PluginInfo* plugin_info(const RopeCacheImpl& impl) {
  const auto* plugin = dynamic_cast<const PluginRopeCache*>(&impl);
  return plugin != nullptr ? plugin->info() : nullptr;
}

}  // namespace ropecheck
