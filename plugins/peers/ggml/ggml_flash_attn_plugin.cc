// The ggml attention peer (issue 41): llama.cpp's CPU attention, ggml_flash_attn_ext on ggml's CPU
// backend, as an attention plugin (plugins/include/ropecheck/attention_plugin.h), verified and
// benchmarked beside attention_blas and attention_fused. Built twice from this file
// (CMakeLists.txt):
//   ggml_flash_attn.so      plugin/ggml_flash_attn: K and V in F16, llama.cpp's default KV cache
//                           (ggml_cpy into it); judged by the bound of F16 K and V
//   ggml_flash_attn_f32.so  plugin/ggml_flash_attn_f32 (ROPECHECK_GGML_KV_F32): K and V left F32
//                           (llama.cpp's -ctk f32 -ctv f32); judged by the fp32 bound
// RoPE is ropecheck's (its fast kernel rotates q and k before the call), not ggml_rope_ext: the
// comparison is of attention with attention, and ggml's rope, whose fp32 angle recurrence is its
// own class of error, is verified apart as plugin/ggml.
//   ropecheck list --plugin build/plugins/ggml_flash_attn.so    # the version, CPU level, pool
//   ropecheck verify --plugin build/plugins/ggml_flash_attn.so
#include <algorithm>
#include <climits>
#include <cstring>
#include <new>
#include <string>

#include "ggml_attention_graph.h"
#include "ggml_cpu_backend.h"
#include "ggml_plugin_init.h"
#include "ropecheck/attention_plugin.h"

namespace ropecheck_ggml_peer {
namespace {

#ifdef ROPECHECK_GGML_KV_F32
constexpr ggml_type kKvType = GGML_TYPE_F32;
constexpr std::uint32_t kKvDtype = ROPECHECK_DTYPE_FP32;
constexpr const char* kName = "ggml_flash_attn_f32";
constexpr const char* kSummary =
    "llama.cpp's ggml_flash_attn_ext on ggml's CPU backend, K and V kept in F32 (-ctk f32 -ctv f32), causal F16 mask";
#else
constexpr ggml_type kKvType = GGML_TYPE_F16;
constexpr std::uint32_t kKvDtype = ROPECHECK_DTYPE_FP16;
constexpr const char* kName = "ggml_flash_attn";
constexpr const char* kSummary =
    "llama.cpp's ggml_flash_attn_ext on ggml's CPU backend, K and V in its default F16 KV cache, causal F16 mask";
#endif

struct Peer {
  explicit Peer(int max_threads) : backend(max_threads), max_threads(max_threads) {}
  CpuBackend backend;
  AttentionGraph graph{kKvType};
  int max_threads;
};

int32_t init(const ropecheck_plugin_init_args* args, void** context) {
  try {
    auto* peer = new Peer(pool_threads(args->max_threads));
    if (peer->backend.backend() == nullptr) {
      write_line(args, peer->backend.error());
      delete peer;
      return ROPECHECK_PLUGIN_ERROR;
    }
    write_line(args, peer->backend.description());
    *context = peer;
    return ROPECHECK_PLUGIN_OK;
  } catch (const std::bad_alloc&) {
    write_line(args, "out of memory");
    return ROPECHECK_PLUGIN_ERROR;
  }
}

void teardown(void* context) { delete static_cast<Peer*>(context); }

int32_t query_capabilities(void*, ropecheck_attention_capabilities* caps) {
  caps->kv_dtype = kKvDtype;
  caps->max_head_dim = 0;
  return ROPECHECK_PLUGIN_OK;
}

int32_t attend(void* context, const ropecheck_attention_call* call) {
  auto& peer = *static_cast<Peer*>(context);
  // ggml-cpu indexes a head's rows and its chunks with int: larger problems are not ggml's.
  if (call->tokens * std::max(call->q_heads, call->kv_heads) * call->head_dim > INT_MAX) {
    return ROPECHECK_PLUGIN_UNSUPPORTED;
  }
  peer.backend.set_threads(std::clamp(call->threads, 1, peer.max_threads));
  try {
    return peer.graph.run(peer.backend.backend(), *call).empty() ? ROPECHECK_PLUGIN_OK : ROPECHECK_PLUGIN_ERROR;
  } catch (const std::bad_alloc&) {
    return ROPECHECK_PLUGIN_ERROR;
  }
}

const ropecheck_attention_plugin_v1 kPlugin = {
    ROPECHECK_ATTENTION_PLUGIN_ABI_V1, sizeof(ropecheck_attention_plugin_v1), kName, kSummary, init,
    query_capabilities, attend, teardown, {nullptr, nullptr, nullptr, nullptr}};

}  // namespace
}  // namespace ropecheck_ggml_peer

extern "C" ROPECHECK_PLUGIN_EXPORT const ropecheck_attention_plugin_v1* ropecheck_attention_plugin_entry(void) {
  return &ropecheck_ggml_peer::kPlugin;
}
