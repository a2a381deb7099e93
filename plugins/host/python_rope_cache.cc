// PythonRopeCache (python_rope_cache.h): a fused cache call staged into the guarded shared
// memory, sent to the Python worker as one JSON request, and judged when it comes back.
#include "plugins/host/python_rope_cache.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "core/errors.h"
#include "core/position_axes.h"

namespace ropecheck {
namespace {

using Json = nlohmann::json;

// The contract's cache dict (docs/porting.md): KvCacheSpec under the names the function reads.
Json cache_json(const KvCacheSpec& cache) {
  return {{"layout", to_string(cache.layout)},
          {"storage", to_string(cache.storage)},
          {"blocks", cache.blocks},
          {"block_size", cache.block_size},
          {"kv_heads", cache.kv_heads},
          {"head_dim", cache.head_dim},
          {"latent_dim", cache.latent_dim},
          {"k_scale", cache.k_scale},
          {"v_scale", cache.v_scale},
          {"scale_direction", to_string(cache.scale_direction)},
          {"padding", to_string(cache.padding)}};
}


class PythonRopeCache final : public RopeCacheImpl {
 public:
  PythonRopeCache(PythonRopeCacheIdentity identity, const PluginOptions& options, std::unique_ptr<GuardedBuffers> memory,
                  std::unique_ptr<PythonProcess> worker, PythonProcessFactory restart)
      : identity_(std::move(identity)), options_(options), memory_(std::move(memory)), worker_(std::move(worker)),
        restart_(std::move(restart)) {}

  std::string_view id() const override { return identity_.id; }
  std::string_view summary() const override { return identity_.summary; }
  RopeCacheCapabilities capabilities() const override { return identity_.capabilities; }
  // The properties draw the rotation within what the function declares.
  RopeCapabilities rope_capabilities() const override {
    RopeCapabilities caps = identity_.rotation;
    caps.passes = {Pass::forward};
    return caps;
  }
  const PythonRopeCacheIdentity& identity() const { return identity_; }

 protected:
  void run(const RopeCacheCall& call) const override {
    refuse_undeclared_rotation(call);
    const std::lock_guard lock(mutex_);  // one worker, one request in flight
    const std::vector<double> factors = longrope_factors(call.spec);
    const std::size_t cache_bytes = call.k_cache.size();
    // The scales travel in the request (JSON), not in shared memory: their buffer stays empty.
    const std::size_t bytes[GuardedBuffers::kBuffers] = {call.q.size_bytes(), call.k.size_bytes(),
                                                         call.positions.size_bytes(), factors.size() * sizeof(double),
                                                         call.v.size_bytes(), call.slots.size_bytes(), cache_bytes,
                                                         call.v_cache.size(), 0};
    memory_->prepare_all(bytes);
    using B = GuardedBuffers;
    copy_bytes(memory_->data(B::q), call.q.data(), call.q.size_bytes());
    copy_bytes(memory_->data(B::k), call.k.data(), call.k.size_bytes());
    copy_bytes(memory_->data(B::v), call.v.data(), call.v.size_bytes());
    copy_bytes(memory_->data(B::positions), call.positions.data(), call.positions.size_bytes());
    copy_bytes(memory_->data(B::factors), factors.data(), factors.size() * sizeof(double));
    copy_bytes(memory_->data(B::slots), call.slots.data(), call.slots.size_bytes());
    copy_bytes(memory_->data(B::k_cache), call.k_cache.data(), cache_bytes);
    copy_bytes(memory_->data(B::v_cache), call.v_cache.data(), call.v_cache.size());

    const Json request = {{"call", "rope_cache"},
                          {"file_bytes", memory_->file_bytes()},
                          {"q", memory_->offset(B::q)},
                          {"k", memory_->offset(B::k)},
                          {"v", memory_->offset(B::v)},
                          {"positions", memory_->offset(B::positions)},
                          {"slots", memory_->offset(B::slots)},
                          {"k_cache", memory_->offset(B::k_cache)},
                          {"v_cache", memory_->offset(B::v_cache)},
                          {"tokens", call.tokens},
                          {"q_heads", call.q_heads},
                          {"axes", axis_count(call.spec)},
                          {"threads", 1},
                          {"spec", python_spec(to_plugin_spec(call.spec), factors)},
                          {"cache", cache_json(call.cache)}};
    exchange(call, request);

    std::string damage = memory_->damage();
    const auto read_only_changed = [&](B::Buffer buffer, const void* original, std::size_t bytes, std::string_view name) {
      if (bytes == 0 || std::memcmp(memory_->data(buffer), original, bytes) == 0) return;
      damage += fmt::format("{}modified {} (read-only)", damage.empty() ? "" : "; ", name);
    };
    read_only_changed(B::v, call.v.data(), call.v.size_bytes(), call.cache.layout == CacheLayout::mla ? "kv_c" : "v");
    read_only_changed(B::positions, call.positions.data(), call.positions.size_bytes(), "positions");
    read_only_changed(B::slots, call.slots.data(), call.slots.size_bytes(), "slots");
    read_only_changed(B::factors, factors.data(), factors.size() * sizeof(double), "the LongRoPE factors");
    if (!damage.empty()) {
      worker_.reset();  // it scribbled on shared memory: trust nothing it holds
      throw PluginFailure(fmt::format("Python function {} (fused cache call: {})", damage, describe(call)));
    }
    copy_bytes(call.q.data(), memory_->data(B::q), call.q.size_bytes());
    copy_bytes(call.k_cache.data(), memory_->data(B::k_cache), cache_bytes);
    copy_bytes(call.v_cache.data(), memory_->data(B::v_cache), call.v_cache.size());
  }

 private:
  // A rotation the function did not declare (its layouts, angles, scaling, axes, partial rotary,
  // largest position or head_dim) is a case it declines, as a RoPE function's would be never drawn.
  void refuse_undeclared_rotation(const RopeCacheCall& call) const {
    std::string why = identity_.rotation.why_unsupported(call.spec);
    for (const std::int64_t m : call.positions) {
      if (!why.empty()) break;
      if (m > identity_.rotation.max_position || m < -identity_.rotation.max_position) {
        why = fmt::format("position {} past its max_position {}", m, identity_.rotation.max_position);
      }
    }
    if (!why.empty()) throw UnsupportedCase(fmt::format("{} does not rotate {}: {}", id(), describe(call.spec), why));
  }

  static std::vector<double> longrope_factors(const RopeSpec& spec) {
    std::vector<double> factors;
    if (spec.scaling.kind == ScalingKind::longrope) {
      factors = spec.scaling.short_factor;
      factors.insert(factors.end(), spec.scaling.long_factor.begin(), spec.scaling.long_factor.end());
    }
    return factors;
  }

  // Sends the request and judges the reply: a crash or a hang (the worker is then spent), or an
  // error the function raised or the driver found (a wrong shape or dtype, a value returned).
  // The caller holds mutex_.
  void exchange(const RopeCacheCall& call, const Json& request) const {
    const std::size_t elements = call.q.size() + call.k.size() + call.v.size() +
                                 2 * static_cast<std::size_t>(cache_elements(call.cache));
    const double seconds = options_.timeout_seconds > 0 ? options_.timeout_seconds : watchdog_seconds(elements);
    Json reply;
    try {
      if (!worker_) worker_ = restart_();
      reply = worker_->call(request, "fused cache call", seconds);
    } catch (const PluginHang& e) {
      worker_.reset();  // killed: the next call starts a fresh interpreter
      throw PluginHang(fmt::format("{}; the call: {}", e.what(), describe(call)));
    } catch (const PluginFailure& e) {
      worker_.reset();
      throw PluginFailure(fmt::format("{}; the call: {}", e.what(), describe(call)));
    }
    if (reply.value("status", "") != "ok") {
      // An exception says what raised it; a result the driver refused says what it was.
      throw PluginFailure(fmt::format("Python function {}{}; the call: {}", reply.value("raised", false) ? "raised " : "",
                                      worker_->error_detail(), describe(call)));
    }
  }

  PythonRopeCacheIdentity identity_;
  PluginOptions options_;
  mutable std::mutex mutex_;
  std::unique_ptr<GuardedBuffers> memory_;
  mutable std::unique_ptr<PythonProcess> worker_;
  PythonProcessFactory restart_;
};

}  // namespace

std::unique_ptr<RopeCacheImpl> make_python_rope_cache(PythonRopeCacheIdentity identity, const PluginOptions& options,
                                                      std::unique_ptr<GuardedBuffers> memory,
                                                      std::unique_ptr<PythonProcess> first,
                                                      PythonProcessFactory restart) {
  return std::make_unique<PythonRopeCache>(std::move(identity), options, std::move(memory), std::move(first),
                                           std::move(restart));
}

const PythonRopeCacheIdentity* python_rope_cache_identity(const RopeCacheImpl& impl) {
  const auto* python = dynamic_cast<const PythonRopeCache*>(&impl);
  return python != nullptr ? &python->identity() : nullptr;
}

}  // namespace ropecheck
