// kernel/<level>, kernel_bf16/<level> and kernel_fp16/<level>: the fast RoPE algorithm of
// impls/kernels/rope_kernel.h at each ISA level, on fp32, bf16 and fp16 storage, one registry
// entry per (storage, level) so that every property runs on every level this CPU has (the others
// are listed as unavailable, with the reason); x86-64 builds have avx2 and avx512, aarch64 ones
// neon and sve. Angles are formed in double (fp64 angle precision: error flat in position).
// The backward pass runs the same level's kernel on the negated frequencies: a R(m)^T = a R(-m),
// and m * (-theta_i) is -(m * theta_i) exactly, so its rows are the forward's with the sine
// negated and its bounds the forward's. Each pass keeps its own rows (a training step alternates
// forward and backward on the same positions).
#include <cstddef>
#include <memory>
#include <new>
#include <vector>

#include "impls/kernels/kernel_scratch.h"
#include "impls/kernels/rope_kernel.h"
#include "core/frequency.h"
#include "core/isa.h"
#include "impls/registry.h"

namespace ropecheck {
namespace {

using Availability = bool (*)(std::string* why);  // cpuid (and ROPECHECK_ISA) for the level
using Fp32Kernel = void (*)(const kernels::RopeKernelProblem&);
using Bf16Kernel = void (*)(const kernels::RopeKernelBf16Problem&);
using Fp16Kernel = void (*)(const kernels::RopeKernelFp16Problem&);


template <typename Element>
void run_kernel(void (*kernel)(const kernels::RopeKernelArgs<Element>&), const RopeSpec& spec,
                HeadTensorOf<Element> q, HeadTensorOf<Element> k, PositionIds positions) {
  thread_local KernelScratch scratch_of_pass[std::size(kAllPasses)];
  KernelScratch& scratch = scratch_of_pass[static_cast<std::size_t>(spec.pass)];
  scratch.prepare(reinterpret_cast<AnyKernel>(kernel), spec);
  const kernels::TableRowCache rows = scratch.rows.cache();
  kernel({q.data.data(), k.data.data(), q.tokens, q.heads, k.heads, spec.head_dim, spec.rotary_dim,
          spec.layout == Layout::interleaved, positions.data(), scratch.theta.data(),
          scratch.scale, scratch.table.data(), scratch.angles.data(), &rows, axis_count(spec),
          scratch.row_axis.data(), scratch.axis_rows.data()});
}

// A kernel level on one storage type: exactly one of the three is set.
struct KernelEntry {
  Fp32Kernel fp32 = nullptr;
  Bf16Kernel bf16 = nullptr;
  Fp16Kernel fp16 = nullptr;
};

class KernelRope final : public RopeImpl {
 public:
  KernelRope(std::string_view id, std::string_view isa, Availability availability,
             KernelEntry kernel, std::string_view summary = {})
      : id_(id), isa_(isa), availability_(availability), kernel_(kernel), summary_(summary) {}

  std::string_view id() const override { return id_; }
  std::string_view summary() const override {
    if (!summary_.empty()) return summary_;
    if (kernel_.bf16 != nullptr) {
      return "fast kernel on bf16 storage: bf16 in and out, fp32 arithmetic, cos/sin once per "
             "token (SLEEF, double angles), all q and k heads in one pass";
    }
    if (kernel_.fp16 != nullptr) {
      return "fast kernel on fp16 storage: fp16 in and out (subnormals kept), fp32 arithmetic, "
             "cos/sin once per token (SLEEF, double angles), all q and k heads in one pass";
    }
    return "fast kernel: cos/sin once per token (SLEEF, double angles), all q and k heads "
           "rotated in one pass, masked remainders";
  }
  RopeCapabilities capabilities() const override {
    RopeCapabilities caps{{Layout::interleaved, Layout::half_split},
                          {AnglePrecision::fp64},
                          true, std::string(isa_), true, ""};
    caps.available = availability_(&caps.unavailable_reason);
    caps.storage = storage();
    caps.max_threads = kMaxCallThreads;  // the tokens split over threads (rope_impl.h)
    caps.axis_modes.assign(std::begin(kAllAxisModes), std::end(kAllAxisModes));
    caps.passes.assign(std::begin(kAllPasses), std::end(kAllPasses));
    return caps;
  }

 protected:
  void rotate_qk(const RopeSpec& spec, HeadTensor q, HeadTensor k,
                 PositionIds positions) const override {
    if (kernel_.fp32 == nullptr) return rotate_qk_through_storage(storage(), spec, q, k, positions);
    run_kernel(kernel_.fp32, spec, q, k, positions);
  }
  void rotate_qk_bf16(const RopeSpec& spec, Bf16HeadTensor q, Bf16HeadTensor k,
                      PositionIds positions) const override {
    run_kernel(kernel_.bf16, spec, q, k, positions);
  }
  void rotate_qk_fp16(const RopeSpec& spec, Fp16HeadTensor q, Fp16HeadTensor k,
                      PositionIds positions) const override {
    run_kernel(kernel_.fp16, spec, q, k, positions);
  }

 private:
  StorageType storage() const {
    return kernel_.bf16 != nullptr   ? StorageType::bf16
           : kernel_.fp16 != nullptr ? StorageType::fp16
                                     : StorageType::fp32;
  }

  std::string_view id_;
  std::string_view isa_;
  Availability availability_;
  KernelEntry kernel_;
  std::string_view summary_;  // empty: the storage's own words below
};

template <Isa level>
bool level_available(std::string* why) {
  return cpu_supports(level, why);
}

}  // namespace

std::unique_ptr<RopeImpl> make_kernel_scalar() {
  return std::make_unique<KernelRope>("kernel/scalar", "scalar", level_available<Isa::scalar>,
                                      KernelEntry{.fp32 = kernels::rope_kernel_scalar});
}
#if defined(__x86_64__)
std::unique_ptr<RopeImpl> make_kernel_avx2() {
  return std::make_unique<KernelRope>("kernel/avx2", "avx2", level_available<Isa::avx2>,
                                      KernelEntry{.fp32 = kernels::rope_kernel_avx2});
}
std::unique_ptr<RopeImpl> make_kernel_avx512() {
  return std::make_unique<KernelRope>("kernel/avx512", "avx512", level_available<Isa::avx512>,
                                      KernelEntry{.fp32 = kernels::rope_kernel_avx512});
}
#elif defined(__aarch64__)
std::unique_ptr<RopeImpl> make_kernel_neon() {
  return std::make_unique<KernelRope>("kernel/neon", "neon", level_available<Isa::neon>,
                                      KernelEntry{.fp32 = kernels::rope_kernel_neon});
}
std::unique_ptr<RopeImpl> make_kernel_sve() {
  return std::make_unique<KernelRope>("kernel/sve", "sve", level_available<Isa::sve>,
                                      KernelEntry{.fp32 = kernels::rope_kernel_sve});
}
// The SVE level's fp32 kernel under another entry point, id and summary, all else kernel/sve's:
// a mutant (impls/mutants/) runs the real kernel with one decision flipped.
std::unique_ptr<RopeImpl> make_kernel_sve_variant(std::string_view id, std::string_view summary, Fp32Kernel kernel) {
  return std::make_unique<KernelRope>(id, "sve", level_available<Isa::sve>, KernelEntry{.fp32 = kernel}, summary);
}
#endif
std::unique_ptr<RopeImpl> make_kernel_bf16_scalar() {
  return std::make_unique<KernelRope>("kernel_bf16/scalar", "scalar", level_available<Isa::scalar>,
                                      KernelEntry{.bf16 = kernels::rope_kernel_bf16_scalar});
}
#if defined(__x86_64__)
std::unique_ptr<RopeImpl> make_kernel_bf16_avx2() {
  return std::make_unique<KernelRope>("kernel_bf16/avx2", "avx2", level_available<Isa::avx2>,
                                      KernelEntry{.bf16 = kernels::rope_kernel_bf16_avx2});
}
std::unique_ptr<RopeImpl> make_kernel_bf16_avx512() {
  return std::make_unique<KernelRope>("kernel_bf16/avx512", "avx512", level_available<Isa::avx512>,
                                      KernelEntry{.bf16 = kernels::rope_kernel_bf16_avx512});
}
std::unique_ptr<RopeImpl> make_kernel_bf16_avx512bf16() {
  return std::make_unique<KernelRope>("kernel_bf16/avx512bf16", "avx512+bf16",
                                      cpu_supports_avx512_bf16,
                                      KernelEntry{.bf16 = kernels::rope_kernel_bf16_avx512bf16});
}
#elif defined(__aarch64__)
std::unique_ptr<RopeImpl> make_kernel_bf16_neon() {
  return std::make_unique<KernelRope>("kernel_bf16/neon", "neon", level_available<Isa::neon>,
                                      KernelEntry{.bf16 = kernels::rope_kernel_bf16_neon});
}
std::unique_ptr<RopeImpl> make_kernel_bf16_sve() {
  return std::make_unique<KernelRope>("kernel_bf16/sve", "sve", level_available<Isa::sve>,
                                      KernelEntry{.bf16 = kernels::rope_kernel_bf16_sve});
}
#endif
std::unique_ptr<RopeImpl> make_kernel_fp16_scalar() {
  return std::make_unique<KernelRope>("kernel_fp16/scalar", "scalar", level_available<Isa::scalar>,
                                      KernelEntry{.fp16 = kernels::rope_kernel_fp16_scalar});
}
#if defined(__x86_64__)
std::unique_ptr<RopeImpl> make_kernel_fp16_avx2() {
  return std::make_unique<KernelRope>("kernel_fp16/avx2", "avx2", level_available<Isa::avx2>,
                                      KernelEntry{.fp16 = kernels::rope_kernel_fp16_avx2});
}
std::unique_ptr<RopeImpl> make_kernel_fp16_avx512() {
  return std::make_unique<KernelRope>("kernel_fp16/avx512", "avx512", level_available<Isa::avx512>,
                                      KernelEntry{.fp16 = kernels::rope_kernel_fp16_avx512});
}
#elif defined(__aarch64__)
std::unique_ptr<RopeImpl> make_kernel_fp16_neon() {
  return std::make_unique<KernelRope>("kernel_fp16/neon", "neon", level_available<Isa::neon>,
                                      KernelEntry{.fp16 = kernels::rope_kernel_fp16_neon});
}
std::unique_ptr<RopeImpl> make_kernel_fp16_sve() {
  return std::make_unique<KernelRope>("kernel_fp16/sve", "sve", level_available<Isa::sve>,
                                      KernelEntry{.fp16 = kernels::rope_kernel_fp16_sve});
}
#endif

}  // namespace ropecheck
