// fused_cache/<level> (fused_rope_cache.h): validation is RopeCacheImpl::apply's; here the call
// becomes the level kernel's plain arguments, with kernel/<level>'s per-thread scratch and kept
// cos/sin rows (kernel_scratch.h), so that q and k are rotated from the rows kernel/<level> forms.
#include "impls/fused/fused_rope_cache.h"

#include <fmt/format.h>

#include <iterator>
#include <string>

#include "core/errors.h"
#include "core/position_axes.h"
#include "impls/kernels/fused_cache_kernel.h"
#include "impls/kernels/kernel_scratch.h"
#include "impls/registry.h"

namespace ropecheck {
namespace {

using FusedKernel = void (*)(const kernels::FusedCacheArgs&);

struct LevelKernels {
  Isa isa;
  FusedKernel fused;
  FusedKernel write;  // the write pass alone
};

LevelKernels level_kernels(Isa level) {
  switch (level) {
    case Isa::scalar: return {level, kernels::fused_rope_cache_scalar, kernels::cache_write_scalar};
#if defined(__x86_64__)
    case Isa::avx2: return {level, kernels::fused_rope_cache_avx2, kernels::cache_write_avx2};
    case Isa::avx512: return {level, kernels::fused_rope_cache_avx512, kernels::cache_write_avx512};
#elif defined(__aarch64__)
    case Isa::neon: return {level, kernels::fused_rope_cache_neon, kernels::cache_write_neon};
    case Isa::sve: return {level, kernels::fused_rope_cache_sve, kernels::cache_write_sve};
#endif
    default: break;  // a level not built here
  }
  throw InvalidInput("fused cache: unknown ISA level");
}

kernels::CacheCode cache_code(CacheStorage storage) {
  switch (storage) {
    case CacheStorage::fp32: return kernels::CacheCode::fp32;
    case CacheStorage::bf16: return kernels::CacheCode::bf16;
    case CacheStorage::fp16: return kernels::CacheCode::fp16;
    case CacheStorage::fp8_e4m3: return kernels::CacheCode::fp8_e4m3;
    case CacheStorage::fp8_e5m2: return kernels::CacheCode::fp8_e5m2;
  }
  throw InvalidInput("fused cache: unknown cache storage");
}

// The call's cache side as the level kernel's arguments: v, the slots, the caches and scales.
void set_cache_args(const RopeCacheCall& call, kernels::FusedCacheArgs& a) {
  const KvCacheSpec& cache = call.cache;
  const bool mla = cache.layout == CacheLayout::mla;
  a.v = call.v.data();
  a.v_dim = mla ? cache.latent_dim : cache.head_dim;
  a.slots = call.slots.data();
  a.k_cache = reinterpret_cast<unsigned char*>(call.k_cache.data());
  a.v_cache = reinterpret_cast<unsigned char*>((mla ? call.k_cache : call.v_cache).data());
  a.storage = cache_code(cache.storage);
  a.head_major = cache.layout == CacheLayout::hnd;
  a.block_size = cache.block_size;
  a.row_features = row_features(cache);
  a.k_offset = mla ? cache.latent_dim : 0;
  a.v_offset = 0;
  if (is_fp8(cache.storage)) {  // mla: the latent is quantized with k's scale (kv_cache.h)
    const std::vector<float>& v_scale = mla ? cache.k_scale : cache.v_scale;
    a.k_scale = cache.k_scale.data();
    a.k_scale_stride = cache.k_scale.size() == 1 ? 0 : 1;
    a.v_scale = v_scale.data();
    a.v_scale_stride = v_scale.size() == 1 ? 0 : 1;
    a.divide = cache.scale_direction == ScaleDirection::divide;
  }
}

// The fused call as the level kernel's arguments; `kernel` keys the scratch's rows (each level
// forms its own bits). The scratch is this thread's, one per pass, as kernel/<level>'s.
void run_fused(FusedKernel kernel, const RopeCacheCall& call) {
  thread_local KernelScratch scratch_of_pass[std::size(kAllPasses)];
  KernelScratch& scratch = scratch_of_pass[static_cast<std::size_t>(call.spec.pass)];
  scratch.prepare(reinterpret_cast<AnyKernel>(kernel), call.spec);
  const kernels::TableRowCache rows = scratch.rows.cache();
  kernels::FusedCacheArgs a{};
  static_cast<kernels::RopeKernelProblem&>(a) = {
      call.q.data(), const_cast<float*>(call.k.data()),  // k is only read
      call.tokens, call.q_heads, call.cache.kv_heads, static_cast<int>(call.spec.head_dim),
      static_cast<int>(call.spec.rotary_dim), call.spec.layout == Layout::interleaved, call.positions.data(),
      scratch.theta.data(), scratch.scale, scratch.table.data(), scratch.angles.data(), &rows,
      axis_count(call.spec), scratch.row_axis.data(), scratch.axis_rows.data()};
  set_cache_args(call, a);
  kernel(a);
}

// The write pass alone reads no table: it leaves the scratch, and with it the fused kernel's kept
// rows, alone (the bench alternates the two: sharing the scratch re-formed every row of every
// fused call, a fifth of an 8192-token prefill's time).
void run_write(FusedKernel write, const RopeCacheCall& call) {
  kernels::FusedCacheArgs a{};
  a.q = call.q.data();
  a.k = const_cast<float*>(call.k.data());  // only read
  a.tokens = call.tokens;
  a.q_heads = call.q_heads;
  a.k_heads = call.cache.kv_heads;
  a.head_dim = static_cast<int>(call.spec.head_dim);
  a.rotary_dim = static_cast<int>(call.spec.rotary_dim);
  a.interleaved = call.spec.layout == Layout::interleaved;
  a.positions = call.positions.data();
  set_cache_args(call, a);
  write(a);
}

class FusedRopeCache final : public RopeCacheImpl {
 public:
  FusedRopeCache(std::string_view id, LevelKernels kernels) : id_(id), kernels_(kernels) {}

  std::string_view id() const override { return id_; }
  std::string_view summary() const override {
    return "fused: q rotated in place; k rotated, scaled and narrowed straight into its cache row with v, one "
           "pass (kernel/<level>'s rows and rotation); padding rotates q only";
  }
  bool available(std::string* why) const override { return cpu_supports(kernels_.isa, why); }
  // It rotates with kernel/<level>'s rows and arithmetic: every RoPE form that kernel computes
  // (looked up at the call: the registry is being built while this is made), forward, one thread.
  RopeCapabilities rope_capabilities() const override {
    const RopeImpl* kernel = find_rope(fmt::format("kernel/{}", to_string(kernels_.isa)));
    RopeCapabilities caps = kernel != nullptr ? kernel->capabilities() : RopeCacheImpl::rope_capabilities();
    caps.passes = {Pass::forward};
    caps.max_threads = 1;
    return caps;
  }
  RopeCacheCapabilities capabilities() const override {
    return every_cache_mode(PaddingRule::rotate_q_only);
  }

 protected:
  void run(const RopeCacheCall& call) const override {
    std::string why;
    if (!cpu_supports(kernels_.isa, &why)) throw InvalidInput(fmt::format("{} cannot run here: {}", id_, why));
    run_fused(kernels_.fused, call);
  }

 private:
  std::string_view id_;
  LevelKernels kernels_;
};

// The checks of RopeCacheImpl::apply, by a fused kernel of the level that declares the call's
// padding (the bench's calls are the caller's to shape).
class CallCheck final : public RopeCacheImpl {
 public:
  explicit CallCheck(RopeCacheCapabilities caps) : caps_(std::move(caps)) {}
  std::string_view id() const override { return "rotate_in_place_then_write"; }
  std::string_view summary() const override { return ""; }
  RopeCacheCapabilities capabilities() const override { return caps_; }

 protected:
  void run(const RopeCacheCall&) const override {}

 private:
  RopeCacheCapabilities caps_;
};

}  // namespace

std::unique_ptr<RopeCacheImpl> make_fused_cache_scalar() {
  return std::make_unique<FusedRopeCache>("fused_cache/scalar", level_kernels(Isa::scalar));
}
#if defined(__x86_64__)
std::unique_ptr<RopeCacheImpl> make_fused_cache_avx2() {
  return std::make_unique<FusedRopeCache>("fused_cache/avx2", level_kernels(Isa::avx2));
}
std::unique_ptr<RopeCacheImpl> make_fused_cache_avx512() {
  return std::make_unique<FusedRopeCache>("fused_cache/avx512", level_kernels(Isa::avx512));
}
#elif defined(__aarch64__)
std::unique_ptr<RopeCacheImpl> make_fused_cache_neon() {
  return std::make_unique<FusedRopeCache>("fused_cache/neon", level_kernels(Isa::neon));
}
std::unique_ptr<RopeCacheImpl> make_fused_cache_sve() {
  return std::make_unique<FusedRopeCache>("fused_cache/sve", level_kernels(Isa::sve));
}
#endif

void rotate_in_place_then_write(Isa level, const RopeCacheCall& call, std::span<float> k) {
  if (call.k.data() != k.data() || call.k.size() != k.size()) {
    throw InvalidInput("rotate_in_place_then_write: the call's k must view the k it rotates in place");
  }
  std::string why;
  if (!cpu_supports(level, &why)) throw InvalidInput(fmt::format("level {} cannot run here: {}", to_string(level), why));
  const auto fused = level_kernels(level);
  CallCheck(FusedRopeCache("", fused).capabilities()).apply(call);
  const RopeImpl* rope = find_rope(fmt::format("kernel/{}", to_string(level)));
  if (rope == nullptr) throw InvalidInput(fmt::format("kernel/{} is not registered", to_string(level)));
  rope->apply(call.spec, HeadTensor{call.q, call.tokens, call.q_heads, call.spec.head_dim},
              HeadTensor{k, call.tokens, call.cache.kv_heads, call.spec.head_dim}, call.positions);
  run_write(fused.write, call);
}

}  // namespace ropecheck
