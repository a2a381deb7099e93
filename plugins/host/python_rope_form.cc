// PythonRopeForm (python_rope_form.h): a call in an engine's form staged into the guarded shared
// memory, sent to the Python worker as one JSON request, and judged when it comes back.
#include "plugins/host/python_rope_form.h"

#include <fmt/format.h>

#include <cstring>
#include <mutex>
#include <vector>

#include "core/errors.h"
#include "core/position_axes.h"

namespace ropecheck {
namespace {

using Json = nlohmann::json;
using Buffers = GuardedBuffers;

// Where each operand lies in the shared memory: the form call's regions (the buffer holds q, k and
// all around them; the norm's weights q's then k's).
constexpr Buffers::Buffer kBuffer = Buffers::form_buffer, kCosSinCache = Buffers::cos_sin_cache,
                          kWeights = Buffers::norm_weights;

// The contract's view dict (docs/porting.md): a HeadView in elements; null for an absent k.
Json view_json(const HeadView& view) {
  if (view.heads == 0) return nullptr;
  return {{"heads", view.heads},
          {"offset", view.offset},
          {"token_stride", view.token_stride},
          {"head_stride", view.head_stride}};
}

class PythonRopeForm final : public RopeFormImpl {
 public:
  PythonRopeForm(PythonRopeFormIdentity identity, const PluginOptions& options, std::unique_ptr<GuardedBuffers> memory,
                 std::unique_ptr<PythonProcess> worker, PythonProcessFactory restart)
      : identity_(std::move(identity)), options_(options), memory_(std::move(memory)), worker_(std::move(worker)),
        restart_(std::move(restart)) {}

  std::string_view id() const override { return identity_.id; }
  std::string_view summary() const override { return identity_.summary; }
  RopeFormCapabilities capabilities() const override { return identity_.capabilities; }
  // The properties draw the rotation within what the function declares.
  RopeCapabilities rope_capabilities() const override {
    RopeCapabilities caps = identity_.rotation;
    caps.passes = {Pass::forward};
    return caps;
  }
  const PythonRopeFormIdentity& identity() const { return identity_; }

 protected:
  void run(const RopeFormCall& call) const override {
    refuse_undeclared_rotation(call);
    const std::lock_guard lock(mutex_);  // one worker, one request in flight
    const std::vector<double> factors = longrope_factors(call.spec);
    const bool with_k = call.k.heads > 0;
    std::vector<float> weights;  // q's, then k's
    if (call.has_norm) {
      weights.assign(call.q_weight.begin(), call.q_weight.end());
      if (with_k) weights.insert(weights.end(), call.k_weight.begin(), call.k_weight.end());
    }
    std::size_t bytes[Buffers::kBuffers] = {};
    bytes[kBuffer] = call.buffer.size();
    bytes[Buffers::positions] = call.positions.size_bytes();
    bytes[Buffers::factors] = factors.size() * sizeof(double);
    bytes[kCosSinCache] = call.cos_sin_cache.size_bytes();
    bytes[kWeights] = weights.size() * sizeof(float);
    memory_->prepare_all(bytes);
    copy_bytes(memory_->data(kBuffer), call.buffer.data(), call.buffer.size());
    copy_bytes(memory_->data(Buffers::positions), call.positions.data(), call.positions.size_bytes());
    copy_bytes(memory_->data(Buffers::factors), factors.data(), bytes[Buffers::factors]);
    copy_bytes(memory_->data(kCosSinCache), call.cos_sin_cache.data(), call.cos_sin_cache.size_bytes());
    copy_bytes(memory_->data(kWeights), weights.data(), bytes[kWeights]);

    const bool cached = call.angles == AngleSource::cos_sin_cache;
    Json norm = nullptr;
    if (call.has_norm) {
      norm = {{"eps", call.norm.eps},
              {"weight", to_string(call.norm.weight)},
              {"precision", to_string(call.norm.precision)},
              {"q_weight", memory_->offset(kWeights)},
              {"k_weight", with_k ? Json(memory_->offset(kWeights) + call.q_weight.size_bytes()) : Json(nullptr)}};
    }
    const Json request = {{"call", "rope_form"},
                          {"file_bytes", memory_->file_bytes()},
                          {"buffer", memory_->offset(kBuffer)},
                          {"elements", call.elements()},
                          {"storage", to_string(call.storage)},
                          {"tokens", call.tokens},
                          {"head_dim", call.spec.head_dim},
                          {"q", view_json(call.q)},
                          {"k", view_json(call.k)},
                          {"positions", memory_->offset(Buffers::positions)},
                          {"angles", to_string(call.angles)},
                          {"cos_sin_cache", cached ? Json(memory_->offset(kCosSinCache)) : Json(nullptr)},
                          {"cache_rows", cached ? call.cache_rows : 0},
                          {"norm", norm},
                          {"threads", 1},
                          {"spec", python_spec(to_plugin_spec(call.spec), factors)}};
    exchange(call, request);

    std::string damage = memory_->damage();
    const auto read_only_changed = [&](Buffers::Buffer buffer, const void* original, std::size_t size, std::string_view name) {
      if (size == 0 || std::memcmp(memory_->data(buffer), original, size) == 0) return;
      damage += fmt::format("{}modified {} (read-only)", damage.empty() ? "" : "; ", name);
    };
    read_only_changed(Buffers::positions, call.positions.data(), call.positions.size_bytes(), "positions");
    read_only_changed(kCosSinCache, call.cos_sin_cache.data(), call.cos_sin_cache.size_bytes(), "cos_sin_cache");
    read_only_changed(kWeights, weights.data(), bytes[kWeights], "q_weight or k_weight");
    read_only_changed(Buffers::factors, factors.data(), bytes[Buffers::factors], "the LongRoPE factors");
    if (!damage.empty()) {
      worker_.reset();  // it scribbled on shared memory: trust nothing it holds
      throw PluginFailure(fmt::format("Python function {} (call form: {})", damage, describe(call)));
    }
    // The whole buffer: what the function wrote outside q's and k's rows is the properties' to see.
    copy_bytes(call.buffer.data(), memory_->data(kBuffer), call.buffer.size());
  }

 private:
  // A rotation the function did not declare (its layouts, angles, partial rotary, largest
  // position or head_dim) is a case it declines, as a RoPE function's would be never drawn.
  void refuse_undeclared_rotation(const RopeFormCall& call) const {
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
  void exchange(const RopeFormCall& call, const Json& request) const {
    const auto elements = static_cast<std::size_t>(call.elements()) + call.cos_sin_cache.size();
    const double seconds = options_.timeout_seconds > 0 ? options_.timeout_seconds : watchdog_seconds(elements);
    Json reply;
    try {
      if (!worker_) worker_ = restart_();
      reply = worker_->call(request, "call form", seconds);
    } catch (const PluginHang& e) {
      worker_.reset();  // killed: the next call starts a fresh interpreter
      throw PluginHang(fmt::format("{}; the call: {}", e.what(), describe(call)));
    } catch (const PluginFailure& e) {
      worker_.reset();
      throw PluginFailure(fmt::format("{}; the call: {}", e.what(), describe(call)));
    }
    if (reply.value("status", "") != "ok") {
      throw PluginFailure(fmt::format("Python function {}{}; the call: {}", reply.value("raised", false) ? "raised " : "",
                                      worker_->error_detail(), describe(call)));
    }
  }

  PythonRopeFormIdentity identity_;
  PluginOptions options_;
  mutable std::mutex mutex_;
  std::unique_ptr<GuardedBuffers> memory_;
  mutable std::unique_ptr<PythonProcess> worker_;
  PythonProcessFactory restart_;
};

}  // namespace

std::unique_ptr<RopeFormImpl> make_python_rope_form(PythonRopeFormIdentity identity, const PluginOptions& options,
                                                    std::unique_ptr<GuardedBuffers> memory,
                                                    std::unique_ptr<PythonProcess> first,
                                                    PythonProcessFactory restart) {
  return std::make_unique<PythonRopeForm>(std::move(identity), options, std::move(memory), std::move(first),
                                          std::move(restart));
}

const PythonRopeFormIdentity* python_rope_form_identity(const RopeFormImpl& impl) {
  const auto* python = dynamic_cast<const PythonRopeForm*>(&impl);
  return python != nullptr ? &python->identity() : nullptr;
}

}  // namespace ropecheck
