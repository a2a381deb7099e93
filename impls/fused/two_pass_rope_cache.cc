// rope_then_write (two_pass_rope_cache.h): rotate with a RoPE implementation, then write.
#include "impls/fused/two_pass_rope_cache.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace ropecheck {
namespace {

class TwoPassRopeCache final : public RopeCacheImpl {
 public:
  TwoPassRopeCache(const RopeImpl& rope, PaddingRule padding, std::string id)
      : rope_(rope), padding_(padding), id_(id.empty() ? fmt::format("rope_then_write/{}", rope.id()) : std::move(id)) {}
  // Owning the kernel it rotates with.
  TwoPassRopeCache(std::unique_ptr<RopeImpl> rope, std::string id)
      : TwoPassRopeCache(*rope, PaddingRule::skip_token, std::move(id)) {
    owned_ = std::move(rope);
  }

  std::string_view id() const override { return id_; }
  std::string_view summary() const override {
    return "two passes: the RoPE implementation rotates q and k, then each valid slot's row is written";
  }
  bool available(std::string* why) const override {
    const RopeCapabilities caps = rope_.capabilities();
    if (!caps.available && why != nullptr) *why = caps.unavailable_reason;
    return caps.available;
  }
  // The rotation is the RoPE implementation's: every form it computes, forward.
  RopeCapabilities rope_capabilities() const override {
    RopeCapabilities caps = rope_.capabilities();
    caps.passes = {Pass::forward};
    caps.max_threads = 1;
    return caps;
  }
  RopeCacheCapabilities capabilities() const override {
    return every_cache_mode(padding_);
  }

 protected:
  void run(const RopeCacheCall& call) const override {
    const KvCacheSpec& cache = call.cache;
    const bool mla = cache.layout == CacheLayout::mla;
    const std::int64_t dim = call.spec.head_dim, v_dim = mla ? cache.latent_dim : dim;
    // Pass 1: q and a copy of k rotated (the padding tokens' q kept aside under skip_token).
    std::vector<float> q_before;
    if (padding_ == PaddingRule::skip_token) q_before.assign(call.q.begin(), call.q.end());
    std::vector<float> k(call.k.begin(), call.k.end());
    rope_.apply(call.spec, HeadTensor{call.q, call.tokens, call.q_heads, dim},
                HeadTensor{std::span<float>(k), call.tokens, cache.kv_heads, dim}, call.positions);
    const auto q_row = static_cast<std::size_t>(call.q_heads * dim);
    for (std::int64_t t = 0; t < call.tokens; ++t) {
      if (padding_ != PaddingRule::skip_token || call.slots[static_cast<std::size_t>(t)] >= 0) continue;
      const auto first = static_cast<std::size_t>(t) * q_row;
      std::copy(q_before.begin() + static_cast<std::ptrdiff_t>(first),
                q_before.begin() + static_cast<std::ptrdiff_t>(first + q_row), call.q.begin() + static_cast<std::ptrdiff_t>(first));
    }
    // Pass 2: each valid token's rows, in the stored domain, narrowed into the cache.
    for (std::int64_t t = 0; t < call.tokens; ++t) {
      const std::int64_t slot = call.slots[static_cast<std::size_t>(t)];
      if (slot < 0) continue;
      for (std::int64_t h = 0; h < cache.kv_heads; ++h) {
        const double k_scale = cache_scale(cache, true, h), v_scale = cache_scale(cache, false, h);
        const std::span<std::byte> v_target = mla ? call.k_cache : call.v_cache;
        for (std::int64_t f = 0; f < v_dim; ++f) {
          const float x = call.v[static_cast<std::size_t>((t * cache.kv_heads + h) * v_dim + f)];
          write_cache_element(cache.storage, v_target, cache_index(cache, slot, h, f),
                              stored_value(x, v_scale, cache.scale_direction));
        }
        const std::int64_t k_offset = mla ? cache.latent_dim : 0;
        for (std::int64_t f = 0; f < dim; ++f) {
          const float x = k[static_cast<std::size_t>((t * cache.kv_heads + h) * dim + f)];
          write_cache_element(cache.storage, call.k_cache, cache_index(cache, slot, h, k_offset + f),
                              stored_value(x, k_scale, cache.scale_direction));
        }
      }
    }
  }

 private:
  // x in the stored domain, in fp32 as a kernel forms it (cache_scale is 1 where not FP8: exact).
  static float stored_value(float x, double scale, ScaleDirection direction) {
    const auto s = static_cast<float>(scale);
    return direction == ScaleDirection::multiply ? x * s : x / s;
  }

  std::unique_ptr<RopeImpl> owned_;  // the kernel rope_ is, when this object made it
  const RopeImpl& rope_;
  const PaddingRule padding_;
  const std::string id_;
};

}  // namespace

std::unique_ptr<RopeCacheImpl> make_two_pass_rope_cache(const RopeImpl& rope, PaddingRule padding, std::string id) {
  return std::make_unique<TwoPassRopeCache>(rope, padding, std::move(id));
}

// The registry is being built when these run, so each makes its own kernel (registry.inc's
// factories) rather than looking one up.
std::unique_ptr<RopeImpl> make_kernel_scalar();
std::unique_ptr<RopeImpl> make_kernel_avx2();
std::unique_ptr<RopeImpl> make_kernel_avx512();
std::unique_ptr<RopeImpl> make_kernel_neon();
std::unique_ptr<RopeImpl> make_kernel_sve();

std::unique_ptr<RopeCacheImpl> make_rope_then_write_scalar() {
  return std::make_unique<TwoPassRopeCache>(make_kernel_scalar(), "rope_then_write/scalar");
}
#if defined(__x86_64__)
std::unique_ptr<RopeCacheImpl> make_rope_then_write_avx2() {
  return std::make_unique<TwoPassRopeCache>(make_kernel_avx2(), "rope_then_write/avx2");
}
std::unique_ptr<RopeCacheImpl> make_rope_then_write_avx512() {
  return std::make_unique<TwoPassRopeCache>(make_kernel_avx512(), "rope_then_write/avx512");
}
#elif defined(__aarch64__)
std::unique_ptr<RopeCacheImpl> make_rope_then_write_neon() {
  return std::make_unique<TwoPassRopeCache>(make_kernel_neon(), "rope_then_write/neon");
}
std::unique_ptr<RopeCacheImpl> make_rope_then_write_sve() {
  return std::make_unique<TwoPassRopeCache>(make_kernel_sve(), "rope_then_write/sve");
}
#endif

}  // namespace ropecheck
