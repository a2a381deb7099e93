// mutant/attention_fp16_accumulator: an attention that declares an F16 KV cache (K and V rounded
// to binary16 once, held to that bound) but, as ggml-cpu's flash attention does below 64 query
// rows (ggml_compute_forward_flash_attn_ext_f16_one_chunk: VKQ16, ggml_vec_mad_f16), also keeps
// its running sum of P V in fp16: every step rounds the accumulator once more, so a long sum of
// same-signed values drifts by up to a rounding a step, beyond what the storage of V explains.
// Online softmax (one pass over the keys, the sum rescaled when the maximum grows) in fp32.
#include <cmath>
#include <memory>
#include <vector>

#include "core/storage.h"
#include "impls/attention/attention_impl.h"

namespace ropecheck {
namespace {

float to_fp16(float x) { return float_from_fp16(fp16_from_float(x)); }

class Fp16Accumulator final : public AttentionImpl {
 public:
  std::string_view id() const override { return "mutant/attention_fp16_accumulator"; }
  std::string_view summary() const override {
    return "an F16 KV cache whose P V sum is also kept in fp16 (ggml-cpu's vector path)";
  }
  StorageType kv_storage() const override { return StorageType::fp16; }

 protected:
  void attend(const AttentionShape& s, std::span<const float> q, std::span<const float> k,
              std::span<const float> v, std::span<float> out, int) const override {
    const auto d = static_cast<std::size_t>(s.head_dim);
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.head_dim)));
    std::vector<float> acc(d);
    for (std::int64_t h = 0; h < s.q_heads; ++h) {
      const std::int64_t kvh = h / (s.q_heads / s.kv_heads);
      for (std::int64_t i = 0; i < s.tokens; ++i) {
        const float* qi = &q[static_cast<std::size_t>(i * s.q_heads + h) * d];
        std::fill(acc.begin(), acc.end(), 0.0f);
        float max = -INFINITY, sum = 0;
        for (std::int64_t j = 0; j < (s.causal ? i + 1 : s.tokens); ++j) {
          const float* kj = &k[static_cast<std::size_t>(j * s.kv_heads + kvh) * d];
          const float* vj = &v[static_cast<std::size_t>(j * s.kv_heads + kvh) * d];
          float dot = 0;
          for (std::size_t c = 0; c < d; ++c) dot += qi[c] * to_fp16(kj[c]);
          const float score = dot * scale;
          float rescale = 1, weight = 1;
          if (score > max) {
            rescale = std::exp(max - score);
            max = score;
          } else {
            weight = std::exp(score - max);
          }
          for (std::size_t c = 0; c < d; ++c) acc[c] = to_fp16(to_fp16(acc[c] * rescale) + to_fp16(vj[c]) * weight);  // BUG
          sum = sum * rescale + weight;
        }
        float* o = &out[static_cast<std::size_t>(i * s.q_heads + h) * d];
        for (std::size_t c = 0; c < d; ++c) o[c] = acc[c] / sum;
      }
    }
  }
};

}  // namespace

std::unique_ptr<AttentionImpl> make_mutant_attention_fp16_accumulator() {
  return std::make_unique<Fp16Accumulator>();
}

}  // namespace ropecheck
