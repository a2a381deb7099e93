// attention_naive/scalar and attention_blas at each softmax level as registry entries (the
// functions are in attention.cc), and AttentionImpl::run: RoPE by the dispatched kernel level,
// then attention.
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "impls/attention/attention_impl.h"
#include "core/errors.h"
#include "core/isa.h"
#include "impls/registry.h"

namespace ropecheck {

void AttentionImpl::run(const AttentionShape& shape, const RopeSpec* rope, PositionIds positions,
                        std::span<const float> q, std::span<const float> k,
                        std::span<const float> v, std::span<float> out, int threads) const {
  validate(shape, q, k, v, out);
  if (rope == nullptr) {
    attend(shape, q, k, v, out, threads);
    return;
  }
  if (fuses_rope()) {
    attend_with_rope(shape, *rope, positions, q, k, v, out, threads);
    return;
  }
  std::vector<float> q_rot(q.begin(), q.end()), k_rot(k.begin(), k.end());
  const RopeImpl* kernel = find_rope("kernel/" + std::string(to_string(dispatched_isa())));
  kernel->apply(*rope, HeadTensor{q_rot, shape.tokens, shape.q_heads, shape.head_dim},
                HeadTensor{k_rot, shape.tokens, shape.kv_heads, shape.head_dim}, positions);
  if (uses_rotated_qk()) {
    attend(shape, q_rot, k_rot, v, out, threads);
  } else {
    attend(shape, q, k, v, out, threads);
  }
}

void AttentionImpl::attend_with_rope(const AttentionShape&, const RopeSpec&, PositionIds,
                                     std::span<const float>, std::span<const float>,
                                     std::span<const float>, std::span<float>, int) const {
  throw std::logic_error(std::string(id()) + " declares fused RoPE but does not implement it");
}

namespace {

// Small blocks in smaller diagonal strips, so that the properties cross block and strip
// boundaries (a last strip cut short included) and the team's split of the tasks on small
// problems too; the team is the caller's (the properties draw it, past the CPUs).
AttentionWork small_blocks_on_a_team(Isa softmax, int threads) {
  return {.block_rows = 7, .strip_rows = 3, .softmax = softmax, .threads = threads};
}

class NaiveAttention final : public AttentionImpl {
 public:
  std::string_view id() const override { return "attention_naive/scalar"; }
  std::string_view summary() const override {
    return "textbook softmax(QK^T/sqrt(d))V, double accumulation: the reference";
  }

 protected:
  void attend(const AttentionShape& shape, std::span<const float> q, std::span<const float> k,
              std::span<const float> v, std::span<float> out, int) const override {
    attention_naive(shape, q, k, v, out);
  }
};

// One per softmax level, so that default verify runs each level this CPU has.
class BlasAttention final : public AttentionImpl {
 public:
  explicit BlasAttention(Isa softmax)
      : softmax_(softmax), id_("attention_blas/" + std::string(to_string(softmax))) {}
  std::string_view id() const override { return id_; }
  std::string_view summary() const override {
    switch (softmax_) {
      case Isa::avx512: return "OpenBLAS sgemm on blocks of query rows, AVX-512 softmax (SLEEF)";
      case Isa::avx2: return "OpenBLAS sgemm on blocks of query rows, AVX2 softmax (SLEEF)";
      case Isa::neon: return "OpenBLAS sgemm on blocks of query rows, NEON softmax (SLEEF)";
      case Isa::sve: return "OpenBLAS sgemm on blocks of query rows, SVE softmax (SLEEF)";
      case Isa::scalar: break;
    }
    return "OpenBLAS sgemm on blocks of query rows, scalar softmax";
  }
  bool available(std::string* why) const override { return cpu_supports(softmax_, why); }

 protected:
  void attend(const AttentionShape& shape, std::span<const float> q, std::span<const float> k,
              std::span<const float> v, std::span<float> out, int threads) const override {
    attention_blas(shape, q, k, v, out, small_blocks_on_a_team(softmax_, threads));
  }

 private:
  Isa softmax_;
  std::string id_;
};

// RoPE fused into attention's blocking (attention_blas_rope_fused), one per softmax level.
class FusedAttention final : public AttentionImpl {
 public:
  explicit FusedAttention(Isa softmax)
      : softmax_(softmax), id_("attention_fused/" + std::string(to_string(softmax))) {}
  std::string_view id() const override { return id_; }
  std::string_view summary() const override {
    return "attention_blas with RoPE fused: query blocks rotated in cache before their sgemms, k once";
  }
  bool available(std::string* why) const override { return cpu_supports(softmax_, why); }

 protected:
  void attend(const AttentionShape& shape, std::span<const float> q, std::span<const float> k,
              std::span<const float> v, std::span<float> out, int threads) const override {
    attention_blas(shape, q, k, v, out, small_blocks_on_a_team(softmax_, threads));
  }
  bool fuses_rope() const override { return true; }
  void attend_with_rope(const AttentionShape& shape, const RopeSpec& rope, PositionIds positions,
                        std::span<const float> q, std::span<const float> k,
                        std::span<const float> v, std::span<float> out, int threads) const override {
    attention_blas_rope_fused(shape, rope, positions, q, k, v, out, small_blocks_on_a_team(softmax_, threads));
  }

 private:
  Isa softmax_;
  std::string id_;
};

}  // namespace

std::unique_ptr<AttentionImpl> make_attention_fused_scalar() {
  return std::make_unique<FusedAttention>(Isa::scalar);
}
#if defined(__x86_64__)
std::unique_ptr<AttentionImpl> make_attention_fused_avx2() {
  return std::make_unique<FusedAttention>(Isa::avx2);
}
std::unique_ptr<AttentionImpl> make_attention_fused_avx512() {
  return std::make_unique<FusedAttention>(Isa::avx512);
}
#elif defined(__aarch64__)
std::unique_ptr<AttentionImpl> make_attention_fused_neon() {
  return std::make_unique<FusedAttention>(Isa::neon);
}
std::unique_ptr<AttentionImpl> make_attention_fused_sve() {
  return std::make_unique<FusedAttention>(Isa::sve);
}
#endif

std::unique_ptr<AttentionImpl> make_attention_naive() { return std::make_unique<NaiveAttention>(); }
std::unique_ptr<AttentionImpl> make_attention_blas_scalar() {
  return std::make_unique<BlasAttention>(Isa::scalar);
}
#if defined(__x86_64__)
std::unique_ptr<AttentionImpl> make_attention_blas_avx2() {
  return std::make_unique<BlasAttention>(Isa::avx2);
}
std::unique_ptr<AttentionImpl> make_attention_blas_avx512() {
  return std::make_unique<BlasAttention>(Isa::avx512);
}
#elif defined(__aarch64__)
std::unique_ptr<AttentionImpl> make_attention_blas_neon() {
  return std::make_unique<BlasAttention>(Isa::neon);
}
std::unique_ptr<AttentionImpl> make_attention_blas_sve() {
  return std::make_unique<BlasAttention>(Isa::sve);
}
#endif

}  // namespace ropecheck
