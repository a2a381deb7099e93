// torch_peer_timing: times a plugin's apply (or, with `backward`, its ABI 4 apply_backward) called
// directly in this process (dlopen, no worker, no shared-memory copies), to separate what a peer
// costs from what the plugin ABI's process boundary adds to `ropecheck bench --plugin` times.
// Any ABI 2-4 plugin (init and teardown run around the calls; one thread) and ABI 1's apply_f32.
// Not part of the test suite.
//   build/torch_peer_timing build/plugins/torch_hf.so half_split
//   build/torch_peer_timing build/plugins/torch_hf.so half_split backward
// Prints, per benchmark shape (bench/format/shapes.h), the median of 15 timed calls after 3 warm-up
// calls, and the rate in GB/s counted as the bench counts it (q and k read and written, fp32).
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "ropecheck/plugin.h"

int main(int argc, char** argv) {
  if (argc != 3 && !(argc == 4 && std::strcmp(argv[3], "backward") == 0)) {
    std::fprintf(stderr, "usage: %s PLUGIN.so interleaved|half_split [backward]\n", argv[0]);
    return 2;
  }
  const bool backward = argc == 4;
  void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    std::fprintf(stderr, "%s\n", dlerror());
    return 2;
  }
  void* symbol = dlsym(library, ROPECHECK_PLUGIN_ENTRY_SYMBOL);
  if (symbol == nullptr) return 2;
  const void* (*entry)();
  std::memcpy(&entry, &symbol, sizeof entry);
  // abi_version is the first field of every version's struct (plugin.h).
  const auto* v1 = static_cast<const ropecheck_plugin_v1*>(entry());
  const auto* v4 = v1->abi_version >= ROPECHECK_PLUGIN_ABI_V2 ? static_cast<const ropecheck_plugin_v4*>(entry()) : nullptr;
  if (backward && (v4 == nullptr || v4->abi_version != ROPECHECK_PLUGIN_ABI_V4 || v4->apply_backward == nullptr)) {
    std::fprintf(stderr, "%s has no ABI 4 apply_backward\n", argv[1]);
    return 2;
  }
  void* context = nullptr;
  ropecheck_plugin_capabilities caps{};
  caps.struct_size = sizeof caps;
  if (v4 != nullptr) {
    char line[256] = {};
    ropecheck_plugin_init_args args{sizeof args, 1, line, sizeof line, 0, {}};
    if (v4->init != nullptr && v4->init(&args, &context) != ROPECHECK_PLUGIN_OK) {
      std::fprintf(stderr, "init failed: %s\n", line);
      return 2;
    }
    v4->query_capabilities(context, &caps);
  }
  // The angles it declares (judged by nothing here, but a plugin may refuse others).
  const int32_t angles = v4 == nullptr || (caps.angle_precisions & (1u << ROPECHECK_ANGLES_FP32)) != 0
                             ? ROPECHECK_ANGLES_FP32
                             : ROPECHECK_ANGLES_FP32_RECURRENCE;
  struct Shape {
    const char* name;
    long tokens, q_heads, k_heads, head_dim, first;
  };
  const Shape shapes[] = {{"gpt2_small_prefill512", 512, 8, 8, 64, 0},
                          {"llama7b_prefill512", 512, 32, 32, 128, 0},
                          {"llama7b_prefill4096", 4096, 32, 32, 128, 0},
                          {"llama3_8b_gqa_prefill512", 512, 32, 8, 128, 0},
                          {"llama7b_decode_at4095", 1, 32, 32, 128, 4095}};
  std::printf("%s (%s%s), in process\n%-26s %12s %10s\n", v1->name, argv[2], backward ? ", backward" : "", "shape",
              "median us", "GB/s");
  for (const Shape& s : shapes) {
    ropecheck_plugin_spec spec{};
    spec.struct_size = sizeof spec;
    spec.head_dim = static_cast<int32_t>(s.head_dim);
    spec.rotary_dim = spec.head_dim;
    spec.layout = std::strcmp(argv[2], "interleaved") == 0 ? ROPECHECK_LAYOUT_INTERLEAVED : ROPECHECK_LAYOUT_HALF_SPLIT;
    spec.angle_precision = angles;
    spec.base = 10000;
    spec.attention_factor = 1;
    std::vector<float> q(static_cast<size_t>(s.tokens * s.q_heads * s.head_dim));
    std::vector<float> k(static_cast<size_t>(s.tokens * s.k_heads * s.head_dim));
    for (size_t i = 0; i < q.size(); ++i) q[i] = std::sin(0.1f * static_cast<float>(i));
    for (size_t i = 0; i < k.size(); ++i) k[i] = std::cos(0.1f * static_cast<float>(i));
    std::vector<int64_t> positions(static_cast<size_t>(s.tokens));
    for (size_t t = 0; t < positions.size(); ++t) positions[t] = s.first + static_cast<int64_t>(t);
    ropecheck_plugin_call call{};
    call.struct_size = sizeof call;
    call.dtype = ROPECHECK_DTYPE_FP32;
    call.spec = &spec;
    call.q = q.data();
    call.q_heads = s.q_heads;
    call.k = k.data();
    call.k_heads = s.k_heads;
    call.positions = positions.data();
    call.tokens = s.tokens;
    call.threads = 1;
    call.axes = 1;
    std::vector<double> seconds;
    for (int rep = 0; rep < 18; ++rep) {
      const auto start = std::chrono::steady_clock::now();
      const int32_t status = v4 == nullptr ? v1->apply_f32(&spec, q.data(), s.q_heads, k.data(), s.k_heads,
                                                           positions.data(), s.tokens)
                             : backward  ? v4->apply_backward(context, &call)
                                         : v4->apply(context, &call);
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
      if (status != ROPECHECK_PLUGIN_OK) {
        std::printf("%-26s status %d\n", s.name, static_cast<int>(status));
        break;
      }
      if (rep >= 3) seconds.push_back(took.count());
    }
    if (seconds.empty()) continue;
    std::sort(seconds.begin(), seconds.end());
    const double median = seconds[seconds.size() / 2];
    const double bytes = 2.0 * 4.0 * static_cast<double>(q.size() + k.size());
    std::printf("%-26s %12.1f %10.3f\n", s.name, median * 1e6, bytes / median / 1e9);
  }
  if (v4 != nullptr && v4->teardown != nullptr) v4->teardown(context);
  return 0;
}
