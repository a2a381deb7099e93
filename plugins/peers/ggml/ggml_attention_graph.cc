// AttentionGraph (ggml_attention_graph.h): ggml's public API only (ggml.h, ggml-alloc.h,
// ggml-backend.h).
#include "ggml_attention_graph.h"

#include <cmath>
#include <cstring>

namespace ropecheck_ggml_peer {
namespace {

// What ggml_backend_cpu_buffer_from_ptr asserts of a pointer (ggml's TENSOR_ALIGNMENT).
constexpr std::uintptr_t kAlignment = 32;
constexpr std::size_t kAlignedFloats = kAlignment / sizeof(float);
constexpr std::uint16_t kF16MinusInfinity = 0xFC00;  // binary16 -inf; +0 is 0x0000

bool aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % kAlignment == 0; }

template <typename T>
T* aligned_start(std::vector<T>& v) {
  const auto at = reinterpret_cast<std::uintptr_t>(v.data());
  return reinterpret_cast<T*>((at + kAlignment - 1) / kAlignment * kAlignment);
}

}  // namespace

AttentionGraph::~AttentionGraph() {
  release_call();
  if (allocator_ != nullptr) ggml_gallocr_free(allocator_);
}

void AttentionGraph::release_call() {
  for (ggml_backend_buffer_t buffer : buffers_) ggml_backend_buffer_free(buffer);
  buffers_.clear();
  if (context_ != nullptr) ggml_free(context_);
  context_ = nullptr;
}

const std::uint16_t* AttentionGraph::mask_for(std::int64_t tokens) {
  if (mask_tokens_ != tokens) {
    const auto n = static_cast<std::size_t>(tokens);
    mask_.assign(n * n + kAlignment / sizeof(std::uint16_t), kF16MinusInfinity);
    std::uint16_t* row = aligned_start(mask_);
    for (std::size_t i = 0; i < n; ++i, row += n) std::memset(row, 0, (i + 1) * sizeof(std::uint16_t));
    mask_tokens_ = tokens;
  }
  return aligned_start(mask_);
}

std::string AttentionGraph::run(ggml_backend_t backend, const ropecheck_attention_call& call) {
  release_call();
  const std::int64_t t = call.tokens, heads = call.q_heads, kv_heads = call.kv_heads, d = call.head_dim;
  constexpr std::size_t kNodes = 16;  // q, k, v, two cache tensors and copies, three views, mask, result
  const ggml_init_params params{ggml_tensor_overhead() * kNodes + ggml_graph_overhead_custom(kNodes, false),
                                nullptr, /*no_alloc=*/true};  // metadata only: the data is the caller's
  context_ = ggml_init(params);
  if (context_ == nullptr) return "ggml_init failed";

  // ggml wraps only aligned memory: an unaligned array is staged in an aligned copy (out is
  // copied back after the graph). Slots of whole 32-byte blocks, each array's own.
  const auto q_floats = static_cast<std::size_t>(t * heads * d), kv_floats = static_cast<std::size_t>(t * kv_heads * d);
  const auto slot = [](std::size_t floats) { return (floats + kAlignedFloats - 1) / kAlignedFloats * kAlignedFloats; };
  staging_.resize(2 * slot(q_floats) + 2 * slot(kv_floats) + kAlignedFloats);
  float* stage = aligned_start(staging_);
  const auto in_place = [&](const float* data, std::size_t floats) -> const float* {
    if (aligned(data)) return data;
    float* copy = stage;
    stage += slot(floats);
    std::memcpy(copy, data, floats * sizeof(float));
    return copy;
  };
  const float* q = in_place(call.q, q_floats);
  const float* k = in_place(call.k, kv_floats);
  const float* v = in_place(call.v, kv_floats);
  float* out = aligned(call.out) ? call.out : stage;

  const auto place = [&](ggml_tensor* tensor, const void* data) {
    ggml_backend_buffer_t buffer = ggml_backend_cpu_buffer_from_ptr(const_cast<void*>(data), ggml_nbytes(tensor));
    if (buffer == nullptr) return false;
    buffers_.push_back(buffer);
    return ggml_backend_tensor_alloc(buffer, tensor, const_cast<void*>(data)) == GGML_STATUS_SUCCESS;
  };
  ggml_tensor* tq = ggml_new_tensor_3d(context_, GGML_TYPE_F32, d, heads, t);
  ggml_tensor* tk = ggml_new_tensor_3d(context_, GGML_TYPE_F32, d, kv_heads, t);
  ggml_tensor* tv = ggml_new_tensor_3d(context_, GGML_TYPE_F32, d, kv_heads, t);
  if (!place(tq, q) || !place(tk, k) || !place(tv, v)) return "cannot place q, k or v";
  ggml_tensor* cache_k = tk;
  ggml_tensor* cache_v = tv;
  if (kv_type_ != GGML_TYPE_F32) {  // llama.cpp's cpy_k / cpy_v into its F16 KV cache
    cache_k = ggml_cpy(context_, tk, ggml_new_tensor_3d(context_, kv_type_, d, kv_heads, t));
    cache_v = ggml_cpy(context_, tv, ggml_new_tensor_3d(context_, kv_type_, d, kv_heads, t));
  }
  ggml_tensor* mask = nullptr;
  if (call.causal != 0) {
    mask = ggml_new_tensor_2d(context_, GGML_TYPE_F16, t, t);  // [n_kv, n_batch]
    if (!place(mask, mask_for(t))) return "cannot place the mask";
  }
  // 1/sqrt(d) in fp32, as attention_blas scales its sgemm (and llama.cpp its kq_scale).
  const auto scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  ggml_tensor* result = ggml_flash_attn_ext(context_, ggml_permute(context_, tq, 0, 2, 1, 3),
                                            ggml_permute(context_, cache_k, 0, 2, 1, 3),
                                            ggml_permute(context_, cache_v, 0, 2, 1, 3), mask, scale, 0.0f, 0.0f);
  if (!place(result, out)) return "cannot place the output";
  ggml_cgraph* graph = ggml_new_graph_custom(context_, kNodes, false);
  ggml_build_forward_expand(graph, result);
  if (allocator_ == nullptr) allocator_ = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
  if (allocator_ == nullptr || !ggml_gallocr_alloc_graph(allocator_, graph)) return "cannot allocate the KV cache copies";
  if (ggml_backend_graph_compute(backend, graph) != GGML_STATUS_SUCCESS) return "graph_compute failed";
  if (out != call.out) std::memcpy(call.out, out, q_floats * sizeof(float));
  return "";
}

}  // namespace ropecheck_ggml_peer
