// RopeFormGraph (ggml_rope_form_graph.h): ggml's public API only (ggml.h, ggml-alloc.h,
// ggml-backend.h).
#include "ggml_rope_form_graph.h"

#include <cstring>

namespace ropecheck_ggml_peer {
namespace {

// What ggml_backend_cpu_buffer_from_ptr asserts of a pointer (ggml's TENSOR_ALIGNMENT).
constexpr std::uintptr_t kFormAlignment = 32;

ggml_type form_type(std::uint32_t dtype) {
  switch (dtype) {
    case ROPECHECK_DTYPE_FP16: return GGML_TYPE_F16;
    case ROPECHECK_DTYPE_BF16: return GGML_TYPE_BF16;
    default: return GGML_TYPE_F32;
  }
}

bool same_view(const ropecheck_plugin_head_view& a, const ropecheck_plugin_head_view& b) {
  return a.heads == b.heads && a.offset == b.offset && a.token_stride == b.token_stride &&
         a.head_stride == b.head_stride;
}

}  // namespace

bool ggml_takes_view(const ropecheck_plugin_head_view& view, std::int64_t tokens, std::int64_t head_dim,
                     std::int64_t elements) {
  return view.offset + view.heads * tokens * head_dim <= elements;
}

RopeFormGraph::~RopeFormGraph() { release(); }

void RopeFormGraph::release() {
  if (allocator_ != nullptr) ggml_gallocr_free(allocator_);
  allocator_ = nullptr;
  if (wrapped_ != nullptr) ggml_backend_buffer_free(wrapped_);
  wrapped_ = nullptr;
  if (inputs_buffer_ != nullptr) ggml_backend_buffer_free(inputs_buffer_);
  inputs_buffer_ = nullptr;
  if (context_ != nullptr) ggml_free(context_);
  if (inputs_context_ != nullptr) ggml_free(inputs_context_);
  context_ = inputs_context_ = nullptr;
  graph_ = nullptr;
  positions_ = q_weight_ = k_weight_ = nullptr;
  buffer_ = nullptr;
}

std::string RopeFormGraph::build(const ropecheck_plugin_form_call& call, void* buffer, const RopeParameters& p) {
  release();
  const ropecheck_plugin_spec& spec = *call.spec;
  const std::int64_t d = spec.head_dim, tokens = call.tokens;
  const bool has_norm = call.norm != nullptr, has_k = call.k != nullptr;
  const ggml_type type = form_type(call.dtype);
  const std::size_t element = ggml_type_size(type);

  // The inputs: positions, the norm's weights, the frequency factors; in a CPU buffer of their
  // own, written per call (the factors once: they are the spec's).
  constexpr std::size_t kInputs = 4;
  ggml_init_params input_params{ggml_tensor_overhead() * kInputs, nullptr, /*no_alloc=*/true};
  inputs_context_ = ggml_init(input_params);
  if (inputs_context_ == nullptr) return "ggml_init failed";
  positions_ = ggml_new_tensor_1d(inputs_context_, GGML_TYPE_I32, tokens);
  ggml_tensor* factors = nullptr;
  if (!p.freq_factors.empty()) {
    factors = ggml_new_tensor_1d(inputs_context_, GGML_TYPE_F32, static_cast<std::int64_t>(p.freq_factors.size()));
  }
  if (has_norm) {
    q_weight_ = ggml_new_tensor_1d(inputs_context_, GGML_TYPE_F32, d);
    if (has_k) k_weight_ = ggml_new_tensor_1d(inputs_context_, GGML_TYPE_F32, d);
  }
  inputs_buffer_ = ggml_backend_alloc_ctx_tensors_from_buft(inputs_context_, ggml_backend_cpu_buffer_type());
  if (inputs_buffer_ == nullptr) return "cannot allocate the positions and weights";
  if (factors != nullptr) ggml_backend_tensor_set(factors, p.freq_factors.data(), 0, ggml_nbytes(factors));

  constexpr std::size_t kNodes = 32;
  ggml_init_params params{ggml_tensor_overhead() * kNodes + ggml_graph_overhead_custom(kNodes, false), nullptr,
                          /*no_alloc=*/true};  // metadata only: the data is the caller's or the allocator's
  context_ = ggml_init(params);
  if (context_ == nullptr) return "ggml_init failed";
  graph_ = ggml_new_graph_custom(context_, kNodes, false);

  // The whole buffer, over the caller's bytes.
  if (reinterpret_cast<std::uintptr_t>(buffer) % kFormAlignment != 0) return "the buffer is not aligned";
  ggml_tensor* whole = ggml_new_tensor_1d(context_, type, call.elements);
  wrapped_ = ggml_backend_cpu_buffer_from_ptr(buffer, ggml_nbytes(whole));
  if (wrapped_ == nullptr || ggml_backend_tensor_alloc(wrapped_, whole, buffer) != GGML_STATUS_SUCCESS) {
    return "cannot place the buffer";
  }

  // One view's chain: view, (cast), (rms_norm, mul), rope, cpy back into the view.
  const auto chain = [&](const ropecheck_plugin_head_view& v, ggml_tensor* weight) {
    ggml_tensor* rows = ggml_view_3d(context_, whole, d, v.heads, tokens, static_cast<std::size_t>(v.head_stride) * element,
                                     static_cast<std::size_t>(v.token_stride) * element,
                                     static_cast<std::size_t>(v.offset) * element);
    ggml_tensor* x = type == GGML_TYPE_F32 ? rows : ggml_cast(context_, rows, GGML_TYPE_F32);
    if (has_norm) {
      x = ggml_mul(context_, ggml_rms_norm(context_, x, static_cast<float>(call.norm->eps)), weight);
    }
    x = ggml_rope_ext(context_, x, positions_, factors, p.n_dims, p.mode, p.n_ctx_orig, p.freq_base, p.freq_scale,
                      p.ext_factor, p.attn_factor, p.beta_fast, p.beta_slow);
    ggml_build_forward_expand(graph_, ggml_cpy(context_, x, rows));
  };
  chain(*call.q, q_weight_);
  if (has_k) chain(*call.k, k_weight_);

  allocator_ = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
  if (allocator_ == nullptr || !ggml_gallocr_alloc_graph(allocator_, graph_)) return "cannot allocate the graph";

  spec_ = spec_without_pointers(spec);
  factors_ = spec_factors(spec);
  buffer_ = buffer;
  dtype_ = call.dtype;
  elements_ = call.elements;
  tokens_ = tokens;
  q_ = *call.q;
  k_ = has_k ? *call.k : ropecheck_plugin_head_view{};
  has_norm_ = has_norm;
  weight_ = has_norm ? call.norm->weight : 0;
  eps_ = has_norm ? call.norm->eps : 0;
  return "";
}

bool RopeFormGraph::matches(const ropecheck_plugin_form_call& call, const void* buffer) const {
  const bool has_norm = call.norm != nullptr;
  const ropecheck_plugin_head_view k = call.k != nullptr ? *call.k : ropecheck_plugin_head_view{};
  if (graph_ == nullptr || buffer != buffer_ || call.dtype != dtype_ || call.elements != elements_ ||
      call.tokens != tokens_ || !same_view(*call.q, q_) || !same_view(k, k_) || has_norm != has_norm_ ||
      (has_norm && (call.norm->weight != weight_ || call.norm->eps != eps_))) {
    return false;
  }
  const ropecheck_plugin_spec spec = spec_without_pointers(*call.spec);
  return std::memcmp(&spec, &spec_, sizeof spec) == 0 && spec_factors(*call.spec) == factors_;
}

bool RopeFormGraph::compute(ggml_backend_t backend, const ropecheck_plugin_form_call& call) {
  std::vector<std::int32_t> positions(static_cast<std::size_t>(call.tokens));
  for (std::int64_t t = 0; t < call.tokens; ++t) {
    positions[static_cast<std::size_t>(t)] = static_cast<std::int32_t>(call.positions[t]);
  }
  ggml_backend_tensor_set(positions_, positions.data(), 0, positions.size() * sizeof(std::int32_t));
  if (has_norm_) {
    // w' as a GGUF stores it: w, or (Gemma) w + 1 added once in fp32 at conversion.
    const auto d = static_cast<std::size_t>(call.spec->head_dim);
    std::vector<float> weight(d);
    const auto write = [&](const float* w, ggml_tensor* into) {
      for (std::size_t f = 0; f < d; ++f) weight[f] = weight_ == ROPECHECK_NORM_WEIGHT_ONE_PLUS ? 1.0f + w[f] : w[f];
      ggml_backend_tensor_set(into, weight.data(), 0, d * sizeof(float));
    };
    write(call.norm->q_weight, q_weight_);
    if (k_weight_ != nullptr) write(call.norm->k_weight, k_weight_);
  }
  return ggml_backend_graph_compute(backend, graph_) == GGML_STATUS_SUCCESS;
}

}  // namespace ropecheck_ggml_peer
