// rope_form_reference.h: the readable reference, one head at a time.
#include "impls/fused/rope_form_reference.h"

#include <cmath>
#include <memory>
#include <vector>

#include "core/frequency.h"
#include "impls/rope/reference_cos_sin.h"

namespace ropecheck {

std::string_view RopeFormReference::summary() const {
  return "the readable reference of the engines' call forms: strided q and k, a cos/sin cache or the spec's "
         "angles, QK-norm in fp32 before the rotation, one head at a time";
}

RopeFormCapabilities RopeFormReference::capabilities() const {
  RopeFormCapabilities caps;
  caps.storages = {StorageType::fp32, StorageType::bf16, StorageType::fp16};
  caps.angle_sources = {AngleSource::spec, AngleSource::cos_sin_cache};
  caps.norm_weights = {NormWeight::plain, NormWeight::one_plus};
  return caps;
}

RopeCapabilities RopeFormReference::rope_capabilities() const {
  RopeCapabilities caps = RopeFormImpl::rope_capabilities();
  caps.angle_precisions = {AnglePrecision::fp32, AnglePrecision::fp64};
  return caps;
}

float RopeFormReference::inverse_rms(float sum_of_squares, int n, float eps) const {
  return 1.0f / std::sqrt(sum_of_squares / static_cast<float>(n) + eps);
}

float RopeFormReference::normalized(float x, float inverse_rms, float weight, NormPrecision precision,
                                    StorageType storage) const {
  if (precision == NormPrecision::fp32) return x * inverse_rms * weight;
  return round_to_storage(round_to_storage(x * inverse_rms, storage) * weight, storage);
}

void RopeFormReference::run(const RopeFormCall& call) const {
  const RopeSpec& spec = call.spec;
  const int d = spec.head_dim, pairs = spec.rotary_dim / 2;
  const std::vector<double> theta = inverse_frequencies(spec);
  const double a = attention_factor(spec);
  std::vector<float> head(static_cast<std::size_t>(d)), cos(static_cast<std::size_t>(d)), sin(cos.size());
  const float eps = static_cast<float>(call.norm.eps);
  for (std::int64_t t = 0; t < call.tokens; ++t) {
    const std::int64_t m = call.positions[static_cast<std::size_t>(t)];
    const float* row = call.angles == AngleSource::cos_sin_cache
                           ? call.cos_sin_cache.data() + m * spec.rotary_dim
                           : nullptr;
    for (const bool of_q : {true, false}) {
      const HeadView view = as_read(of_q ? call.q : k_view(call), d);
      const std::span<const float> weight = of_q ? call.q_weight : call.k_weight;
      const int rotated = rotated_features(spec, call.has_norm);
      const int turned = rotated / 2;
      for (int i = 0; i < turned; ++i) {
        const auto [c, s] = row != nullptr && i < pairs
                                ? cached_cos_sin(row, i, pairs)
                                : reference_cos_sin(spec.angle_precision, m,
                                                    theta[static_cast<std::size_t>(std::min(i, pairs - 1))], a);
        cos[static_cast<std::size_t>(i)] = c;
        sin[static_cast<std::size_t>(i)] = s;
      }
      for (std::int64_t h = 0; h < view.heads; ++h) {
        const std::int64_t start = row_start(view, t, h);
        for (int f = 0; f < d; ++f) head[static_cast<std::size_t>(f)] = load_element(call.storage, call.buffer, start + f);
        if (call.has_norm) {
          float squares = 0;
          for (const float x : head) squares += x * x;
          const float r = inverse_rms(squares, d, eps);
          for (int f = 0; f < d; ++f) {
            auto& x = head[static_cast<std::size_t>(f)];
            x = normalized(x, r, weight_factor(weight[static_cast<std::size_t>(f)], call.norm.weight),
                           call.norm.precision, call.storage);
          }
        }
        for (int i = 0; i < turned; ++i) {
          const auto [ia, ib] = spec.layout == Layout::interleaved ? std::pair{2 * i, 2 * i + 1}
                                                                   : std::pair{i, i + turned};
          const float xa = head[static_cast<std::size_t>(ia)], xb = head[static_cast<std::size_t>(ib)];
          const float c = cos[static_cast<std::size_t>(i)], s = sin[static_cast<std::size_t>(i)];
          store_element(call.storage, call.buffer, start + ia, c * xa - s * xb);
          store_element(call.storage, call.buffer, start + ib, s * xa + c * xb);
        }
        for (int f = rotated; f < d; ++f) {
          store_element(call.storage, call.buffer, start + f, tail_value(head[static_cast<std::size_t>(f)], call));
        }
      }
    }
  }
}

std::unique_ptr<RopeFormImpl> make_form_reference_scalar() { return std::make_unique<RopeFormReference>(); }

}  // namespace ropecheck
