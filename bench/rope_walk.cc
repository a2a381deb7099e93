// How the RoPE-sized cases walk q and k (rope_walk.h).
#include "bench/rope_walk.h"

#include "bench/probes.h"

namespace ropecheck::bench {

TokenRange my_tokens(const benchmark::State& state, std::int64_t tokens) {
  const std::int64_t i = state.thread_index(), n = state.threads();
  return {tokens * i / n, tokens * (i + 1) / n - tokens * i / n};
}

void probe_pass(std::span<float> q, std::span<float> k, std::int64_t tokens) {
  walk_token_groups(q, k, tokens, [](std::span<float> q_part, std::span<float> k_part) {
    // -1: two passes leave the data as it was; the scale is opaque to the compiler (probes.cc).
    inplace_scale(q_part, -1.0f);
    inplace_scale(k_part, -1.0f);
  });
}

}  // namespace ropecheck::bench
