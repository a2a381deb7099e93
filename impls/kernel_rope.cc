// kernel/scalar, kernel/avx2, kernel/avx512: the fast RoPE algorithm of impls/kernels/rope_kernel.h
// at each ISA level, one registry entry per level so that every property runs on every level this
// CPU has (the others are listed as unavailable, with the reason). Angles are formed in double
// (fp64 angle precision: error flat in position).
#include <memory>
#include <vector>

#include "kernels/rope_kernel.h"
#include "ropecheck/frequency.h"
#include "ropecheck/isa.h"
#include "ropecheck/registry.h"

namespace ropecheck {
namespace {

class KernelRope final : public RopeImpl {
 public:
  using Kernel = void (*)(const kernels::RopeKernelProblem&);
  KernelRope(Isa isa, std::string_view id, Kernel kernel) : isa_(isa), id_(id), kernel_(kernel) {}

  std::string_view id() const override { return id_; }
  std::string_view summary() const override {
    return "fast kernel: cos/sin once per token (SLEEF, double angles), all q and k heads rotated "
           "in one pass, masked remainders";
  }
  RopeCapabilities capabilities() const override {
    RopeCapabilities caps{{Layout::interleaved, Layout::half_split},
                          {AnglePrecision::fp64},
                          true, std::string(to_string(isa_)), true, ""};
    caps.available = cpu_supports(isa_, &caps.unavailable_reason);
    return caps;
  }

 protected:
  void rotate_qk(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                 PositionIds positions) const override {
    const auto theta = inverse_frequencies(spec);
    // 16 floats of slack: a masked vector store never needs it, but keeps the table's last
    // vector in one allocation whatever the level's width.
    std::vector<float> table(2 * static_cast<std::size_t>(spec.rotary_dim) + 16);
    kernel_({q.data.data(), k.data.data(), q.tokens, q.heads, k.heads, spec.head_dim,
             spec.rotary_dim, spec.layout == Layout::interleaved, positions.data(), theta.data(),
             table.data()});
  }

 private:
  Isa isa_;
  std::string_view id_;
  Kernel kernel_;
};

}  // namespace

std::unique_ptr<RopeImpl> make_kernel_scalar() {
  return std::make_unique<KernelRope>(Isa::scalar, "kernel/scalar", kernels::rope_kernel_scalar);
}
std::unique_ptr<RopeImpl> make_kernel_avx2() {
  return std::make_unique<KernelRope>(Isa::avx2, "kernel/avx2", kernels::rope_kernel_avx2);
}
std::unique_ptr<RopeImpl> make_kernel_avx512() {
  return std::make_unique<KernelRope>(Isa::avx512, "kernel/avx512", kernels::rope_kernel_avx512);
}

}  // namespace ropecheck
