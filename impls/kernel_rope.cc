// kernel/<level> and kernel_bf16/<level>: the fast RoPE algorithm of impls/kernels/rope_kernel.h
// at each ISA level, on fp32 and on bf16 storage, one registry entry per (storage, level) so that
// every property runs on every level this CPU has (the others are listed as unavailable, with the
// reason). Angles are formed in double (fp64 angle precision: error flat in position).
#include <memory>
#include <vector>

#include "kernels/rope_kernel.h"
#include "ropecheck/frequency.h"
#include "ropecheck/isa.h"
#include "ropecheck/registry.h"

namespace ropecheck {
namespace {

using Availability = bool (*)(std::string* why);  // cpuid (and ROPECHECK_ISA) for the level
using Fp32Kernel = void (*)(const kernels::RopeKernelProblem&);
using Bf16Kernel = void (*)(const kernels::RopeKernelBf16Problem&);

// The frequencies and the cos/sin scratch table of the last spec this thread used. Decoding
// applies RoPE to one token at a time: recomputing rotary_dim/2 powers and allocating per call
// would cost more than rotating the token (the decode benchmark measures it).
struct KernelScratch {
  int rotary_dim = 0;
  double base = 0;
  RopeScaling scaling;
  std::vector<double> theta;
  double scale = 1.0;
  std::vector<float> table;
  std::vector<double> angles;

  void prepare(const RopeSpec& spec) {
    if (spec.rotary_dim == rotary_dim && spec.base == base && spec.scaling == scaling) return;
    theta = inverse_frequencies(spec);
    scale = attention_factor(spec);
    // 16 floats of slack: a masked vector store never needs it, but keeps the table's last
    // vector in one allocation whatever the level's width.
    table.assign(2 * static_cast<std::size_t>(spec.rotary_dim) + 16, 0.0f);
    angles.assign(2 * static_cast<std::size_t>(spec.rotary_dim), 0.0);
    rotary_dim = spec.rotary_dim;
    base = spec.base;
    scaling = spec.scaling;
  }
};

template <typename Element>
void run_kernel(void (*kernel)(const kernels::RopeKernelArgs<Element>&), const RopeSpec& spec,
                HeadTensorOf<Element> q, HeadTensorOf<Element> k, PositionIds positions) {
  thread_local KernelScratch scratch;
  scratch.prepare(spec);
  kernel({q.data.data(), k.data.data(), q.tokens, q.heads, k.heads, spec.head_dim, spec.rotary_dim,
          spec.layout == Layout::interleaved, positions.data(), scratch.theta.data(),
          scratch.scale, scratch.table.data(), scratch.angles.data()});
}

class KernelRope final : public RopeImpl {
 public:
  KernelRope(std::string_view id, std::string_view isa, Availability availability, Fp32Kernel fp32,
             Bf16Kernel bf16)
      : id_(id), isa_(isa), availability_(availability), fp32_(fp32), bf16_(bf16) {}

  std::string_view id() const override { return id_; }
  std::string_view summary() const override {
    return bf16_ != nullptr
               ? "fast kernel on bf16 storage: bf16 in and out, fp32 arithmetic, cos/sin once per "
                 "token (SLEEF, double angles), all q and k heads in one pass"
               : "fast kernel: cos/sin once per token (SLEEF, double angles), all q and k heads "
                 "rotated in one pass, masked remainders";
  }
  RopeCapabilities capabilities() const override {
    RopeCapabilities caps{{Layout::interleaved, Layout::half_split},
                          {AnglePrecision::fp64},
                          true, std::string(isa_), true, ""};
    caps.available = availability_(&caps.unavailable_reason);
    caps.storage = bf16_ != nullptr ? StorageType::bf16 : StorageType::fp32;
    return caps;
  }

 protected:
  void rotate_qk(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                 PositionIds positions) const override {
    if (bf16_ == nullptr) return run_kernel(fp32_, spec, q, k, positions);
    // fp32 in and out through bf16 storage: round, rotate, widen back (exact).
    auto q16 = to_bf16(q), k16 = to_bf16(k);
    rotate_qk_bf16(spec, {q16, q.tokens, q.heads, q.head_dim}, {k16, k.tokens, k.heads, k.head_dim},
                   positions);
    for (std::size_t j = 0; j < q16.size(); ++j) q.data[j] = float_from_bf16(q16[j]);
    for (std::size_t j = 0; j < k16.size(); ++j) k.data[j] = float_from_bf16(k16[j]);
  }
  void rotate_qk_bf16(const RopeSpec& spec, Bf16HeadTensor q, Bf16HeadTensor k,
                      PositionIds positions) const override {
    run_kernel(bf16_, spec, q, k, positions);
  }

 private:
  static std::vector<std::uint16_t> to_bf16(const HeadTensor& x) {
    std::vector<std::uint16_t> out(x.data.size());
    for (std::size_t j = 0; j < out.size(); ++j) out[j] = bf16_from_float(x.data[j]);
    return out;
  }

  std::string_view id_;
  std::string_view isa_;
  Availability availability_;
  Fp32Kernel fp32_;
  Bf16Kernel bf16_;
};

template <Isa level>
bool level_available(std::string* why) {
  return cpu_supports(level, why);
}

}  // namespace

std::unique_ptr<RopeImpl> make_kernel_scalar() {
  return std::make_unique<KernelRope>("kernel/scalar", "scalar", level_available<Isa::scalar>,
                                      kernels::rope_kernel_scalar, nullptr);
}
std::unique_ptr<RopeImpl> make_kernel_avx2() {
  return std::make_unique<KernelRope>("kernel/avx2", "avx2", level_available<Isa::avx2>,
                                      kernels::rope_kernel_avx2, nullptr);
}
std::unique_ptr<RopeImpl> make_kernel_avx512() {
  return std::make_unique<KernelRope>("kernel/avx512", "avx512", level_available<Isa::avx512>,
                                      kernels::rope_kernel_avx512, nullptr);
}
std::unique_ptr<RopeImpl> make_kernel_bf16_scalar() {
  return std::make_unique<KernelRope>("kernel_bf16/scalar", "scalar", level_available<Isa::scalar>,
                                      nullptr, kernels::rope_kernel_bf16_scalar);
}
std::unique_ptr<RopeImpl> make_kernel_bf16_avx512() {
  return std::make_unique<KernelRope>("kernel_bf16/avx512", "avx512", level_available<Isa::avx512>,
                                      nullptr, kernels::rope_kernel_bf16_avx512);
}
std::unique_ptr<RopeImpl> make_kernel_bf16_avx512bf16() {
  return std::make_unique<KernelRope>("kernel_bf16/avx512bf16", "avx512+bf16",
                                      cpu_supports_avx512_bf16, nullptr,
                                      kernels::rope_kernel_bf16_avx512bf16);
}

}  // namespace ropecheck
