// RopeGraph (ggml_rope_graph.h): ggml's public API only (ggml.h, ggml-backend.h).
#include "ggml_rope_graph.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <cstring>

namespace ropecheck_ggml_peer {
namespace {

// What ggml_backend_cpu_buffer_from_ptr asserts of a pointer (ggml's TENSOR_ALIGNMENT).
constexpr std::uintptr_t kAlignment = 32;

// A tensor of `context` placed over `data` (no copy): a CPU buffer wrapping the memory.
bool place(ggml_tensor* tensor, void* data, ggml_backend_buffer_t& buffer) {
  if (reinterpret_cast<std::uintptr_t>(data) % kAlignment != 0) return false;
  buffer = ggml_backend_cpu_buffer_from_ptr(data, ggml_nbytes(tensor));
  return buffer != nullptr && ggml_backend_tensor_alloc(buffer, tensor, data) == GGML_STATUS_SUCCESS;
}

// The op of `pass` on x: the forward in place (a view of x), the backward into a fresh tensor.
ggml_tensor* rope_op(ggml_context* context, ggml_tensor* x, ggml_tensor* positions, ggml_tensor* factors,
                     const RopeParameters& p, Pass pass) {
  int sections[kGgmlAxes];  // ggml_rope_multi takes them as a non-const int*
  std::copy(std::begin(p.sections), std::end(p.sections), sections);
  if (pass == Pass::backward) {
    return p.multi ? ggml_rope_multi_back(context, x, positions, factors, p.n_dims, sections, p.mode, p.n_ctx_orig,
                                          p.freq_base, p.freq_scale, p.ext_factor, p.attn_factor, p.beta_fast,
                                          p.beta_slow)
                   : ggml_rope_ext_back(context, x, positions, factors, p.n_dims, p.mode, p.n_ctx_orig, p.freq_base,
                                        p.freq_scale, p.ext_factor, p.attn_factor, p.beta_fast, p.beta_slow);
  }
  return p.multi ? ggml_rope_multi_inplace(context, x, positions, factors, p.n_dims, sections, p.mode, p.n_ctx_orig,
                                           p.freq_base, p.freq_scale, p.ext_factor, p.attn_factor, p.beta_fast,
                                           p.beta_slow)
                 : ggml_rope_ext_inplace(context, x, positions, factors, p.n_dims, p.mode, p.n_ctx_orig, p.freq_base,
                                         p.freq_scale, p.ext_factor, p.attn_factor, p.beta_fast, p.beta_slow);
}

}  // namespace

RopeGraph::~RopeGraph() { release(); }

void RopeGraph::release() {
  for (auto& buffer : buffers_) {
    if (buffer != nullptr) ggml_backend_buffer_free(buffer);
    buffer = nullptr;
  }
  if (context_ != nullptr) ggml_free(context_);
  context_ = nullptr;
  graph_ = nullptr;
}

std::string RopeGraph::build(const ropecheck_plugin_call& call, const RopeParameters& p, Pass pass) {
  release();
  const ropecheck_plugin_spec& spec = *call.spec;
  constexpr std::size_t kNodes = 8;  // q, k, positions, factors, two ropes
  ggml_init_params params{ggml_tensor_overhead() * kNodes + ggml_graph_overhead_custom(kNodes, false),
                          nullptr, /*no_alloc=*/true};  // metadata only: the data is the caller's
  context_ = ggml_init(params);
  if (context_ == nullptr) return "ggml_init failed";
  const ggml_type type = call.dtype == ROPECHECK_DTYPE_FP16 ? GGML_TYPE_F16 : GGML_TYPE_F32;

  // Positions and factors live in this object's memory, aligned as ggml's buffers want it;
  // ggml_rope_multi takes kGgmlAxes a token.
  const std::int64_t position_count = call.tokens * (p.multi ? kGgmlAxes : 1);
  positions_.assign(static_cast<std::size_t>(position_count) + kAlignment / sizeof(std::int32_t), 0);
  ggml_tensor* positions = ggml_new_tensor_1d(context_, GGML_TYPE_I32, position_count);
  ggml_tensor* factors = nullptr;
  const auto aligned = [](auto& v) {
    auto at = reinterpret_cast<std::uintptr_t>(v.data());
    return reinterpret_cast<void*>((at + kAlignment - 1) / kAlignment * kAlignment);
  };
  if (!place(positions, aligned(positions_), buffers_[2])) return "cannot place the positions";
  if (!p.freq_factors.empty()) {
    freq_factors_ = p.freq_factors;
    freq_factors_.resize(p.freq_factors.size() + kAlignment / sizeof(float));
    float* at = static_cast<float*>(aligned(freq_factors_));
    std::memmove(at, freq_factors_.data(), p.freq_factors.size() * sizeof(float));
    factors = ggml_new_tensor_1d(context_, GGML_TYPE_F32, static_cast<std::int64_t>(p.freq_factors.size()));
    if (!place(factors, at, buffers_[3])) return "cannot place the frequency factors";
  }

  graph_ = ggml_new_graph_custom(context_, kNodes, false);
  const auto rope = [&](void* data, std::int64_t heads, ggml_backend_buffer_t& buffer) -> bool {
    ggml_tensor* x = ggml_new_tensor_3d(context_, type, spec.head_dim, heads, call.tokens);
    if (!place(x, data, buffer)) return false;
    ggml_tensor* rotated = rope_op(context_, x, positions, factors, p, pass);
    // The forward's result is a view of x; the backward's, a tensor of its own placed over x's
    // memory in x's buffer (the header says why).
    const ggml_status placed = pass == Pass::forward ? ggml_backend_view_init(rotated)
                                                     : ggml_backend_tensor_alloc(buffer, rotated, data);
    if (placed != GGML_STATUS_SUCCESS) return false;
    ggml_build_forward_expand(graph_, rotated);
    return true;
  };
  if (!rope(call.q, call.q_heads, buffers_[0])) return "cannot place q";
  if (call.k_heads > 0 && !rope(call.k, call.k_heads, buffers_[1])) return "cannot place k";

  spec_ = spec_without_pointers(spec);
  factors_ = spec_factors(spec);
  dtype_ = call.dtype;
  q_ = call.q;
  k_ = call.k;
  q_heads_ = call.q_heads;
  k_heads_ = call.k_heads;
  tokens_ = call.tokens;
  multi_ = p.multi;
  pass_ = pass;
  return "";
}

bool RopeGraph::matches(const ropecheck_plugin_call& call, Pass pass) const {
  if (graph_ == nullptr || pass != pass_ || call.dtype != dtype_ || call.q != q_ || call.k != k_ || call.q_heads != q_heads_ ||
      call.k_heads != k_heads_ || call.tokens != tokens_) {
    return false;
  }
  const ropecheck_plugin_spec spec = spec_without_pointers(*call.spec);
  return std::memcmp(&spec, &spec_, sizeof spec) == 0 && spec_factors(*call.spec) == factors_;
}

bool RopeGraph::compute(ggml_backend_t backend, const ropecheck_plugin_call& call) {
  // The positions tensor was placed at the first aligned int32 of positions_.
  auto at = reinterpret_cast<std::uintptr_t>(positions_.data());
  auto* positions = reinterpret_cast<std::int32_t*>((at + kAlignment - 1) / kAlignment * kAlignment);
  if (!multi_) {
    for (std::int64_t t = 0; t < call.tokens; ++t) positions[t] = static_cast<std::int32_t>(call.positions[t]);
  } else {
    // ropecheck's token-major call->axes a token into ggml's axis-major four: {t...}, {h...},
    // {w...}, {e...}; the axes a mode lacks (vision's last two, every mode's fourth) are 0.
    const std::int64_t axes = call.axes;
    for (std::int64_t a = 0; a < kGgmlAxes; ++a) {
      for (std::int64_t t = 0; t < call.tokens; ++t) {
        positions[a * call.tokens + t] = a < axes ? static_cast<std::int32_t>(call.positions[t * axes + a]) : 0;
      }
    }
  }
  return ggml_backend_graph_compute(backend, graph_) == GGML_STATUS_SUCCESS;
}

}  // namespace ropecheck_ggml_peer
