// torch_peer_timing: times a plugin's apply_f32 called directly in this process (dlopen, no
// worker, no shared-memory copies), to separate what a peer costs from what the plugin ABI's
// process boundary adds to `ropecheck bench --plugin` times. Not part of the test suite.
//   build/torch_peer_timing build/plugins/torch_hf.so half_split
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
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s PLUGIN.so interleaved|half_split\n", argv[0]);
    return 2;
  }
  void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    std::fprintf(stderr, "%s\n", dlerror());
    return 2;
  }
  void* symbol = dlsym(library, ROPECHECK_PLUGIN_ENTRY_SYMBOL);
  if (symbol == nullptr) return 2;
  ropecheck_plugin_entry_fn entry;
  std::memcpy(&entry, &symbol, sizeof entry);
  const ropecheck_plugin_v1* plugin = entry();
  struct Shape {
    const char* name;
    long tokens, q_heads, k_heads, head_dim, first;
  };
  const Shape shapes[] = {{"gpt2_small_prefill512", 512, 8, 8, 64, 0},
                          {"llama7b_prefill512", 512, 32, 32, 128, 0},
                          {"llama7b_prefill4096", 4096, 32, 32, 128, 0},
                          {"llama3_8b_gqa_prefill512", 512, 32, 8, 128, 0},
                          {"llama7b_decode_at4095", 1, 32, 32, 128, 4095}};
  std::printf("%s (%s), in process\n%-26s %12s %10s\n", plugin->name, argv[2], "shape", "median us", "GB/s");
  for (const Shape& s : shapes) {
    ropecheck_plugin_spec spec{};
    spec.struct_size = sizeof spec;
    spec.head_dim = static_cast<int32_t>(s.head_dim);
    spec.rotary_dim = spec.head_dim;
    spec.layout = std::strcmp(argv[2], "interleaved") == 0 ? ROPECHECK_LAYOUT_INTERLEAVED : ROPECHECK_LAYOUT_HALF_SPLIT;
    spec.angle_precision = ROPECHECK_ANGLES_FP32;
    spec.base = 10000;
    std::vector<float> q(static_cast<size_t>(s.tokens * s.q_heads * s.head_dim));
    std::vector<float> k(static_cast<size_t>(s.tokens * s.k_heads * s.head_dim));
    for (size_t i = 0; i < q.size(); ++i) q[i] = std::sin(0.1f * static_cast<float>(i));
    for (size_t i = 0; i < k.size(); ++i) k[i] = std::cos(0.1f * static_cast<float>(i));
    std::vector<int64_t> positions(static_cast<size_t>(s.tokens));
    for (size_t t = 0; t < positions.size(); ++t) positions[t] = s.first + static_cast<int64_t>(t);
    std::vector<double> seconds;
    for (int rep = 0; rep < 18; ++rep) {
      const auto start = std::chrono::steady_clock::now();
      const int32_t status = plugin->apply_f32(&spec, q.data(), s.q_heads, k.data(), s.k_heads, positions.data(), s.tokens);
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
  return 0;
}
