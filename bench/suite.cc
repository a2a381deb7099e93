// The benchmark suite (see suite.h).
#include "bench/suite.h"

namespace ropecheck::bench {

std::vector<Comparison> register_suite(Suite& suite, std::span<const RopeImpl* const> rope_impls,
                                       std::span<const int> threads,
                                       std::span<const AttentionImpl* const> attention_peers,
                                       std::span<const RopeCacheImpl* const> rope_cache_peers,
                                       std::span<const RopeFormImpl* const> rope_form_peers) {
  auto table = register_rope_cases(suite.rope, rope_impls, threads, suite.left_out);
  for (auto& row : register_conversion_cases(suite.conversions, suite.rope.workloads, threads, suite.left_out)) {
    table.push_back(std::move(row));
  }
  for (auto& row : register_rotation_cases(suite.rotations, suite.rope.workloads, threads, suite.left_out)) {
    table.push_back(std::move(row));
  }
  for (auto& row : register_fused_cache_cases(suite.fused_caches, suite.left_out)) table.push_back(std::move(row));
  for (auto& row : register_fused_cache_peer_cases(suite.fused_cache_peers, rope_cache_peers, suite.left_out)) {
    table.push_back(std::move(row));
  }
  for (auto& row : register_qk_norm_rope_cases(suite.qk_norm_ropes, suite.left_out)) table.push_back(std::move(row));
  for (auto& row : register_qk_norm_rope_peer_cases(suite.qk_norm_rope_peers, rope_form_peers, suite.left_out)) {
    table.push_back(std::move(row));
  }
  for (auto& row : register_table_cases(suite.tables)) table.push_back(std::move(row));
  for (auto& row : register_attention_cases(suite.attention, threads, attention_peers, suite.rope.time_failing)) {
    table.push_back(std::move(row));
  }
  return table;
}

}  // namespace ropecheck::bench
