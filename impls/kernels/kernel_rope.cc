// kernel/<level>, kernel_bf16/<level> and kernel_fp16/<level>: the fast RoPE algorithm of
// impls/kernels/rope_kernel.h at each ISA level, on fp32, bf16 and fp16 storage, one registry
// entry per (storage, level) so that every property runs on every level this CPU has (the others
// are listed as unavailable, with the reason). Angles are formed in double (fp64 angle precision: error flat in position).
// The backward pass runs the same level's kernel on the negated frequencies: a R(m)^T = a R(-m),
// and m * (-theta_i) is -(m * theta_i) exactly, so its rows are the forward's with the sine
// negated and its bounds the forward's. Each pass keeps its own rows (a training step alternates
// forward and backward on the same positions).
#include <cstddef>
#include <memory>
#include <new>
#include <vector>

#include "impls/kernels/rope_kernel.h"
#include "impls/kernels/table_rows.h"
#include "core/frequency.h"
#include "core/isa.h"
#include "impls/registry.h"

namespace ropecheck {
namespace {

using Availability = bool (*)(std::string* why);  // cpuid (and ROPECHECK_ISA) for the level
using Fp32Kernel = void (*)(const kernels::RopeKernelProblem&);
using Bf16Kernel = void (*)(const kernels::RopeKernelBf16Problem&);
using Fp16Kernel = void (*)(const kernels::RopeKernelFp16Problem&);

// Cache-line aligned storage for the scratch below. With malloc's 16-byte alignment, where the
// table landed within a cache line depended on everything the process had allocated before (its
// command line among it), and with it whether the vector loads and stores of the table split two
// lines: kernel_bf16/avx512bf16 on llama3_8b_gqa_prefill512 ran 9% apart between two processes
// of one build whose argv[0] differed in length (bench/README.md), which a gate reads as a
// change of speed.
template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlignment{64};
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlignment)); }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, kAlignment); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const noexcept { return true; }
};

// The frequencies, the cos/sin scratch table and the cached table rows (TableRows) of the last
// spec and kernel this thread used. Decoding applies RoPE to one token at a time: recomputing
// rotary_dim/2 powers and allocating per call would cost more than rotating the token (the
// decode benchmark measures it).
using AnyKernel = void (*)();

struct KernelScratch {
  AnyKernel kernel = nullptr;  // the level: each forms its own bits, so each has its own rows
  int rotary_dim = 0;
  double base = 0;
  Layout layout = Layout::interleaved;  // the rows hold the table in the layout's form
  RopeScaling scaling;
  PositionAxes axes;
  std::vector<double> theta;
  double scale = 1.0;
  std::vector<float, CacheLineAllocator<float>> table;
  std::vector<double, CacheLineAllocator<double>> angles;
  TableRows rows;
  // Multi-axis specs: each row float's axis, and a scratch row per axis (rope_kernel.h).
  std::vector<std::int32_t, CacheLineAllocator<std::int32_t>> row_axis;
  std::vector<float, CacheLineAllocator<float>> axis_rows;

  void prepare(AnyKernel for_kernel, const RopeSpec& spec) {
    if (for_kernel == kernel && spec.rotary_dim == rotary_dim && spec.base == base &&
        spec.layout == layout && spec.scaling == scaling && spec.axes == axes) {
      return;
    }
    theta = inverse_frequencies(spec);
    if (spec.pass == Pass::backward) {
      for (double& t : theta) t = -t;
    }
    scale = attention_factor(spec);
    // One row, as a kept one (TableRows::row_bytes: the table and its slack).
    table.assign(TableRows::row_bytes(spec.rotary_dim) / sizeof(float), 0.0f);
    angles.assign(2 * static_cast<std::size_t>(spec.rotary_dim), 0.0);
    rows.reset(spec.rotary_dim);
    prepare_axes(spec);
    kernel = for_kernel;
    rotary_dim = spec.rotary_dim;
    base = spec.base;
    layout = spec.layout;
    scaling = spec.scaling;
    axes = spec.axes;
  }

  // The axis of each float of a row: the cos and sin floats of pair i take pair i's axis.
  void prepare_axes(const RopeSpec& spec) {
    const auto floats = static_cast<std::size_t>(kernels::row_floats(spec.rotary_dim));
    row_axis.assign(floats, 0);
    axis_rows.assign(kMaxAxes * floats, 0.0f);
    const std::vector<int> pair_axis = pair_axes(spec.axes, spec.rotary_dim);
    const auto d = static_cast<std::size_t>(spec.rotary_dim);
    for (std::size_t i = 0; i < pair_axis.size(); ++i) {
      const auto a = static_cast<std::int32_t>(pair_axis[i]);
      if (spec.layout == Layout::interleaved) {  // cos_dup and sin_signed: features 2i, 2i + 1
        row_axis[2 * i] = row_axis[2 * i + 1] = row_axis[d + 2 * i] = row_axis[d + 2 * i + 1] = a;
      } else {  // cos and sin: entry i of each
        row_axis[i] = row_axis[d + i] = a;
      }
    }
  }
};

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
             KernelEntry kernel)
      : id_(id), isa_(isa), availability_(availability), kernel_(kernel) {}

  std::string_view id() const override { return id_; }
  std::string_view summary() const override {
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
std::unique_ptr<RopeImpl> make_kernel_avx2() {
  return std::make_unique<KernelRope>("kernel/avx2", "avx2", level_available<Isa::avx2>,
                                      KernelEntry{.fp32 = kernels::rope_kernel_avx2});
}
std::unique_ptr<RopeImpl> make_kernel_avx512() {
  return std::make_unique<KernelRope>("kernel/avx512", "avx512", level_available<Isa::avx512>,
                                      KernelEntry{.fp32 = kernels::rope_kernel_avx512});
}
std::unique_ptr<RopeImpl> make_kernel_bf16_scalar() {
  return std::make_unique<KernelRope>("kernel_bf16/scalar", "scalar", level_available<Isa::scalar>,
                                      KernelEntry{.bf16 = kernels::rope_kernel_bf16_scalar});
}
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

std::unique_ptr<RopeImpl> make_kernel_fp16_scalar() {
  return std::make_unique<KernelRope>("kernel_fp16/scalar", "scalar", level_available<Isa::scalar>,
                                      KernelEntry{.fp16 = kernels::rope_kernel_fp16_scalar});
}
std::unique_ptr<RopeImpl> make_kernel_fp16_avx2() {
  return std::make_unique<KernelRope>("kernel_fp16/avx2", "avx2", level_available<Isa::avx2>,
                                      KernelEntry{.fp16 = kernels::rope_kernel_fp16_avx2});
}
std::unique_ptr<RopeImpl> make_kernel_fp16_avx512() {
  return std::make_unique<KernelRope>("kernel_fp16/avx512", "avx512", level_available<Isa::avx512>,
                                      KernelEntry{.fp16 = kernels::rope_kernel_fp16_avx512});
}

}  // namespace ropecheck
