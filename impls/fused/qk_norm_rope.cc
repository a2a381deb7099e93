// qk_norm_rope/<level> and norm_then_rope/<level>: RoPE in the engines' call forms with QK-norm
// fused before it (qk_norm_rope_kernel.h), and the two passes the bench compares it with. The
// call becomes the level kernel's plain arguments, with kernel/<level>'s per-thread scratch and
// kept cos/sin rows (kernel_scratch.h), its tokens split over call.threads (token_chunk) by
// moving the views' offsets and the positions. Validation is RopeFormImpl::apply's.
//   qk_norm_rope: one pass, the norm kept in fp32 into the rotation (NormPrecision::fp32).
//   norm_then_rope: pass 1 normalizes every q and k row in place, in the storage (x r rounded,
//     then the product with w' rounded: NormPrecision::storage); pass 2 is the same level's call
//     without a norm. Each pass reads and writes every row: twice the fused call's bytes.
#include <fmt/format.h>

#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/isa.h"
#include "core/thread_team.h"
#include "impls/fused/rope_form_impl.h"
#include "impls/kernels/kernel_scratch.h"
#include "impls/kernels/qk_norm_rope_kernel.h"
#include "impls/registry.h"

namespace ropecheck {
namespace {

using FormKernel = void (*)(const kernels::QkNormRopeArgs&);

FormKernel qkn_kernel(Isa level) {
  switch (level) {
    case Isa::scalar: return kernels::qk_norm_rope_scalar;
#if defined(__x86_64__)
    case Isa::avx2: return kernels::qk_norm_rope_avx2;
    case Isa::avx512: return kernels::qk_norm_rope_avx512;
#elif defined(__aarch64__)
    case Isa::neon: return kernels::qk_norm_rope_neon;
    case Isa::sve: return kernels::qk_norm_rope_sve;
#endif
    default: break;  // a level not built here
  }
  throw InvalidInput("qk_norm_rope: unknown ISA level");
}

kernels::FormStorage qkn_storage(StorageType storage) {
  switch (storage) {
    case StorageType::fp32: return kernels::FormStorage::fp32;
    case StorageType::bf16: return kernels::FormStorage::bf16;
    case StorageType::fp16: return kernels::FormStorage::fp16;
  }
  throw InvalidInput("qk_norm_rope: unknown storage");
}

kernels::FormView qkn_view(const HeadView& v, std::int64_t first_token) {
  return {v.heads, v.offset + first_token * v.token_stride, v.token_stride, v.head_stride};
}

// w' of each feature in fp32: w, or 1 + w rounded once (the reference's weight_factor).
void qkn_weight(std::span<const float> w, NormWeight convention, std::vector<float>& out) {
  out.resize(w.size());
  for (std::size_t f = 0; f < w.size(); ++f) out[f] = convention == NormWeight::one_plus ? 1.0f + w[f] : w[f];
}

// Tokens [first, end) of the call through `kernel`, on this thread, with this thread's scratch
// (one per kernel level, keyed as kernel/<level>'s, so each forms its own rows).
void qkn_run_chunk(FormKernel kernel, const RopeFormCall& call, std::int64_t first, std::int64_t end,
               kernels::FormNorm norm, bool rotate, const float* q_weight, const float* k_weight) {
  thread_local KernelScratch scratch;
  scratch.prepare(reinterpret_cast<AnyKernel>(kernel), call.spec);
  const kernels::TableRowCache rows = scratch.rows.cache();
  kernels::QkNormRopeArgs a{};
  static_cast<kernels::RopeKernelProblem&>(a) = {
      nullptr, nullptr, end - first, 0, 0, static_cast<int>(call.spec.head_dim), static_cast<int>(call.spec.rotary_dim),
      call.spec.layout == Layout::interleaved, call.positions.data() + first, scratch.theta.data(), scratch.scale,
      scratch.table.data(), scratch.angles.data(), &rows, 1, nullptr, nullptr};
  a.buffer = reinterpret_cast<unsigned char*>(call.buffer.data());
  a.storage = qkn_storage(call.storage);
  a.q_view = qkn_view(call.q, first);
  a.k_view = qkn_view(call.k, first);
  a.cos_sin_cache = call.angles == AngleSource::cos_sin_cache ? call.cos_sin_cache.data() : nullptr;
  a.norm = norm;
  a.eps = static_cast<float>(call.norm.eps);
  a.q_weight = q_weight;
  a.k_weight = k_weight;
  a.rotate = rotate;
  kernel(a);
}

// The whole call, its tokens split over call.threads.
void qkn_run_call(FormKernel kernel, const RopeFormCall& call, kernels::FormNorm norm, bool rotate) {
  thread_local std::vector<float> q_weight, k_weight;
  if (norm != kernels::FormNorm::none) {
    qkn_weight(call.q_weight, call.norm.weight, q_weight);
    qkn_weight(call.k.heads > 0 ? call.k_weight : std::span<const float>(), call.norm.weight, k_weight);
  }
  const float* qw = q_weight.data();
  const float* kw = k_weight.data();
  if (call.threads <= 1) return qkn_run_chunk(kernel, call, 0, call.tokens, norm, rotate, qw, kw);
  run_team(call.threads, [&](int j) {
    const TokenChunk c = token_chunk(call.tokens, call.threads, j);
    if (c.begin < c.end) qkn_run_chunk(kernel, call, c.begin, c.end, norm, rotate, qw, kw);
  });
}

class QkNormRope final : public RopeFormImpl {
 public:
  QkNormRope(std::string_view id, Isa level, bool two_pass) : id_(id), level_(level), two_pass_(two_pass) {}

  std::string_view id() const override { return id_; }
  std::string_view summary() const override {
    return two_pass_ ? "two passes: every q and k row RMS-normalized in place in the storage, then the same level's "
                       "RoPE call (kernel/<level>'s rows and rotation), each pass reading and writing every row"
                     : "fused: each q and k head read once, RMS-normalized in fp32, rotated in registers "
                       "(kernel/<level>'s rows and rotation, or the cos/sin cache's row) and stored once";
  }
  bool available(std::string* why) const override { return cpu_supports(level_, why); }
  RopeFormCapabilities capabilities() const override {
    RopeFormCapabilities caps;
    caps.storages = {StorageType::fp32, StorageType::bf16, StorageType::fp16};
    caps.angle_sources = {AngleSource::spec, AngleSource::cos_sin_cache};
    caps.norm_weights = {NormWeight::plain, NormWeight::one_plus};
    caps.norm_precision = two_pass_ ? NormPrecision::storage : NormPrecision::fp32;
    return caps;
  }
  // kernel/<level>'s rows and arithmetic: both layouts, partial rotary, fp64 angles, every scaling;
  // one axis, forward; the tokens split over threads.
  RopeCapabilities rope_capabilities() const override {
    RopeCapabilities caps = RopeFormImpl::rope_capabilities();
    caps.angle_precisions = {AnglePrecision::fp64};
    caps.isa = std::string(to_string(level_));
    caps.available = cpu_supports(level_, &caps.unavailable_reason);
    caps.max_threads = kMaxCallThreads;
    return caps;
  }

 protected:
  void run(const RopeFormCall& call) const override {
    std::string why;
    if (!cpu_supports(level_, &why)) throw InvalidInput(fmt::format("{} cannot run here: {}", id_, why));
    const FormKernel kernel = qkn_kernel(level_);
    if (!call.has_norm) return qkn_run_call(kernel, call, kernels::FormNorm::none, true);
    if (!two_pass_) return qkn_run_call(kernel, call, kernels::FormNorm::fp32, true);
    qkn_run_call(kernel, call, kernels::FormNorm::storage, false);
    qkn_run_call(kernel, call, kernels::FormNorm::none, true);
  }

 private:
  std::string_view id_;
  Isa level_;
  bool two_pass_;
};

}  // namespace

std::unique_ptr<RopeFormImpl> make_qk_norm_rope_scalar() {
  return std::make_unique<QkNormRope>("qk_norm_rope/scalar", Isa::scalar, false);
}
#if defined(__x86_64__)
std::unique_ptr<RopeFormImpl> make_qk_norm_rope_avx2() {
  return std::make_unique<QkNormRope>("qk_norm_rope/avx2", Isa::avx2, false);
}
std::unique_ptr<RopeFormImpl> make_qk_norm_rope_avx512() {
  return std::make_unique<QkNormRope>("qk_norm_rope/avx512", Isa::avx512, false);
}
#elif defined(__aarch64__)
std::unique_ptr<RopeFormImpl> make_qk_norm_rope_neon() {
  return std::make_unique<QkNormRope>("qk_norm_rope/neon", Isa::neon, false);
}
std::unique_ptr<RopeFormImpl> make_qk_norm_rope_sve() {
  return std::make_unique<QkNormRope>("qk_norm_rope/sve", Isa::sve, false);
}
#endif
std::unique_ptr<RopeFormImpl> make_norm_then_rope_scalar() {
  return std::make_unique<QkNormRope>("norm_then_rope/scalar", Isa::scalar, true);
}
#if defined(__x86_64__)
std::unique_ptr<RopeFormImpl> make_norm_then_rope_avx2() {
  return std::make_unique<QkNormRope>("norm_then_rope/avx2", Isa::avx2, true);
}
std::unique_ptr<RopeFormImpl> make_norm_then_rope_avx512() {
  return std::make_unique<QkNormRope>("norm_then_rope/avx512", Isa::avx512, true);
}
#elif defined(__aarch64__)
std::unique_ptr<RopeFormImpl> make_norm_then_rope_neon() {
  return std::make_unique<QkNormRope>("norm_then_rope/neon", Isa::neon, true);
}
std::unique_ptr<RopeFormImpl> make_norm_then_rope_sve() {
  return std::make_unique<QkNormRope>("norm_then_rope/sve", Isa::sve, true);
}
#endif

}  // namespace ropecheck
