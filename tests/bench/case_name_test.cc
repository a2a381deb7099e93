// The one case-name grammar (bench/format/case_name.h): every name round-trips, malformed names
// are refused, and the names Google Benchmark really reports for registered cases parse back.
#include "bench/format/case_name.h"

#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bench/format/shapes.h"

namespace ropecheck::bench {
namespace {

TEST(CaseName, RopeRoundTrips) {
  for (const RopeShape& shape : kRopeShapes) {
    for (const char* layout : {"interleaved", "half_split"}) {
      for (const int threads : {1, 2, 16}) {
        const RopeCaseName name{"kernel_bf16/avx512bf16", shape.name, layout, threads};
        const auto parsed = parse_rope_case(full_name(name));
        ASSERT_TRUE(parsed) << full_name(name);
        EXPECT_EQ(parsed->impl, name.impl);
        EXPECT_EQ(parsed->shape, name.shape);
        EXPECT_EQ(parsed->layout, name.layout);
        EXPECT_EQ(parsed->threads, threads);
        EXPECT_FALSE(parsed->in_worker);
        // A plugin timed in its worker: its threads before the time kind.
        const RopeCaseName plugin{"plugin/ggml", shape.name, layout, threads, true};
        const auto in_worker = parse_rope_case(full_name(plugin));
        ASSERT_TRUE(in_worker) << full_name(plugin);
        EXPECT_EQ(in_worker->impl, "plugin/ggml");
        EXPECT_EQ(in_worker->threads, threads);
        EXPECT_TRUE(in_worker->in_worker);
      }
    }
  }
}

// The backward pass: "/backward" after the layout, in process and in a plugin's worker; the
// forward's name never reads as a backward one.
TEST(CaseName, BackwardRoundTripsBesideItsForward) {
  for (const bool in_worker : {false, true}) {
    RopeCaseName name{"kernel/avx512", "llama7b_prefill512", "half_split", 2, in_worker};
    name.backward = true;
    EXPECT_NE(full_name(name).find("/half_split/backward/"), std::string::npos) << full_name(name);
    const auto parsed = parse_rope_case(full_name(name));
    ASSERT_TRUE(parsed) << full_name(name);
    EXPECT_TRUE(parsed->backward);
    EXPECT_EQ(parsed->impl, "kernel/avx512");
    EXPECT_EQ(parsed->layout, "half_split");
    EXPECT_EQ(parsed->threads, 2);
    EXPECT_EQ(parsed->in_worker, in_worker);
    name.backward = false;
    const auto forward = parse_rope_case(full_name(name));
    ASSERT_TRUE(forward);
    EXPECT_FALSE(forward->backward);
  }
  // Only "backward" may stand there.
  EXPECT_FALSE(parse_rope_case("kernel/avx512/llama7b_prefill512/interleaved/sideways/real_time/threads:1"));
}

TEST(CaseName, AttentionAndTableRoundTrip) {
  for (const AttentionProblem p : kAttentionProblems) {
    for (const AttentionRope rope : {AttentionRope::none, AttentionRope::separate, AttentionRope::fused}) {
      const AttentionCaseName name{kAttentionHeads, p.tokens, p.head_dim, 2, rope};
      const auto parsed = parse_attention_case(full_name(name));
      ASSERT_TRUE(parsed) << full_name(name);
      EXPECT_EQ(parsed->heads, kAttentionHeads);
      EXPECT_EQ(parsed->tokens, p.tokens);
      EXPECT_EQ(parsed->head_dim, p.head_dim);
      EXPECT_EQ(parsed->blas_threads, 2);
      EXPECT_EQ(parsed->rope, rope);
      EXPECT_TRUE(full_name(name).starts_with(std::string(form_id(rope)) + "/")) << full_name(name);
    }
  }
  // GQA, and an attention peer at threads of its own: their own names, read back whole.
  for (const AttentionProblem p : kAttentionProblems) {
    for (const std::string peer : {"", "plugin/ggml_flash_attn"}) {
      const AttentionCaseName name{kAttentionHeads, p.tokens, p.head_dim, 2, AttentionRope::none, p.kv_heads, peer};
      const auto parsed = parse_attention_case(full_name(name));
      ASSERT_TRUE(parsed) << full_name(name);
      EXPECT_EQ(parsed->kv(), p.kv_heads) << full_name(name);
      EXPECT_EQ(parsed->peer, peer);
      EXPECT_EQ(parsed->impl(), peer.empty() ? "attention_blas" : peer);
      EXPECT_EQ(full_name(*parsed), full_name(name));
    }
  }
  EXPECT_EQ(full_name(AttentionCaseName{8, 512, 128, 1, AttentionRope::none, 2}),
            "attention_blas/causal_8heads_2kv/tokens:512/head_dim:128/blas_threads:1/real_time");
  EXPECT_EQ(full_name(AttentionCaseName{8, 512, 128, 2, AttentionRope::none, 8, "plugin/ggml_flash_attn"}),
            "plugin/ggml_flash_attn/causal_8heads/tokens:512/head_dim:128/threads:2/real_time");
  // Attention alone keeps the name it always had (gate baselines and reports read it).
  EXPECT_EQ(full_name(AttentionCaseName{8, 512, 64, 1}),
            "attention_blas/causal_8heads/tokens:512/head_dim:64/blas_threads:1/real_time");
  EXPECT_EQ(full_name(AttentionCaseName{8, 2048, 128, 1, AttentionRope::fused}),
            "attention_fused/causal_8heads/tokens:2048/head_dim:128/blas_threads:1/real_time");
  const auto table = parse_table_case(full_name(TableCaseName{"sinusoidal/formula", "transformer_base_4096x512"}));
  ASSERT_TRUE(table);
  EXPECT_EQ(table->impl, "sinusoidal/formula");
  EXPECT_EQ(table->shape, "transformer_base_4096x512");
}

TEST(CaseName, ConversionRoundTrips) {
  for (const RopeShape& shape : kRopeShapes) {
    for (const int threads : {1, 2}) {
      const ConversionCaseName name{"conversion_fp16/avx512", shape.name, threads};
      const auto parsed = parse_conversion_case(full_name(name));
      ASSERT_TRUE(parsed) << full_name(name);
      EXPECT_EQ(parsed->conversion, name.conversion);
      EXPECT_EQ(parsed->shape, name.shape);
      EXPECT_EQ(parsed->threads, threads);
      // no other grammar takes it, and it takes no RoPE name
      EXPECT_FALSE(parse_rope_case(full_name(name)));
      EXPECT_FALSE(parse_table_case(full_name(name)));
      EXPECT_FALSE(parse_conversion_case(full_name(RopeCaseName{"kernel_fp16/avx512", shape.name, "interleaved", threads})));
    }
  }
  EXPECT_EQ(kernel_of_conversion("conversion_bf16/avx512bf16"), "kernel_bf16/avx512bf16");
  EXPECT_EQ(kernel_of_conversion("conversion_fp16/avx2"), "kernel_fp16/avx2");
}

TEST(CaseName, RotationRoundTripsAndIsNoImplementation) {
  for (const RopeShape& shape : kRopeShapes) {
    for (const char* rotation : {"rotation/avx2", "rotation_bf16/avx512bf16"}) {
      for (const char* layout : {"interleaved", "half_split"}) {
        const RotationCaseName name{rotation, shape.name, layout, 2};
        const auto parsed = parse_rotation_case(full_name(name));
        ASSERT_TRUE(parsed) << full_name(name);
        EXPECT_EQ(parsed->rotation, name.rotation);
        EXPECT_EQ(parsed->shape, name.shape);
        EXPECT_EQ(parsed->layout, name.layout);
        EXPECT_EQ(parsed->threads, 2);
        // RoPE's grammar would take it as an implementation "rotation/avx2": it must not
        EXPECT_FALSE(parse_rope_case(full_name(name))) << full_name(name);
        EXPECT_FALSE(parse_conversion_case(full_name(name)));
        EXPECT_FALSE(parse_rotation_case(full_name(RopeCaseName{"kernel/avx2", shape.name, layout, 2})));
      }
    }
  }
  EXPECT_FALSE(parse_rotation_case("rotation/avx2/gpt2_small_prefill512/diagonal/real_time/threads:1"));
  EXPECT_FALSE(parse_rotation_case("rotation/avx2/gpt2_small_prefill512/interleaved/real_time/threads:0"));
  EXPECT_FALSE(parse_rotation_case("rotation_/avx2/gpt2_small_prefill512/interleaved/real_time/threads:1"));
  EXPECT_EQ(kernel_of_rotation("rotation/avx2"), "kernel/avx2");
  EXPECT_EQ(kernel_of_rotation("rotation_bf16/avx512bf16"), "kernel_bf16/avx512bf16");
}

// The fused peers' cases (bench/fused_cache_peer_cases.h) read back as fused cases, so that the
// report's fused table shows them beside the own kernels; a RoPE plugin case stays a RoPE case.
// Without plugin/ and python/ in parse_fused_cache_case the peer parses as nothing (the first ASSERT).
TEST(CaseName, FusedPeerRoundTripsAndIsNoRopeCase) {
  const FusedCacheCaseName peer{"plugin/torch_vllm_cache", "llama3_8b_gqa_prefill4096", "nhd", "bf16"};
  const auto parsed = parse_fused_cache_case(full_name(peer));
  ASSERT_TRUE(parsed) << full_name(peer);
  EXPECT_EQ(parsed->impl, peer.impl);
  EXPECT_EQ(parsed->shape, peer.shape);
  EXPECT_EQ(parsed->layout, "nhd");
  EXPECT_EQ(parsed->storage, "bf16");
  EXPECT_FALSE(parse_rope_case(full_name(peer)));
  EXPECT_FALSE(parse_fused_cache_case("plugin/torch_hf_rotate_half/llama7b_prefill512/half_split/threads:1/manual_time"));
  EXPECT_FALSE(parse_fused_cache_case("other/torch_vllm_cache/llama3_8b_gqa_prefill4096/nhd_bf16/real_time"));
}

// The call-form peers' cases (bench/qk_norm_rope_peer_cases.h) read back as QK-norm + RoPE cases,
// beside the own kernels' (the report's table shows them there); they are neither RoPE nor fused
// cache cases. Without plugin/ and python/ in parse_qk_norm_rope_case the peer parses as nothing.
TEST(CaseName, FormPeerRoundTripsAsAQkNormRopeCase) {
  for (const QkNormRopeCaseName& peer : {QkNormRopeCaseName{"plugin/torch_vllm_rope", "qwen3_8b_prefill8192", "cache", "bf16"},
                                        QkNormRopeCaseName{"python/torch_rope_form.hf_qwen3_qk_norm",
                                                           "qwen3_8b_prefill8192", "spec", "bf16"}}) {
    const auto parsed = parse_qk_norm_rope_case(full_name(peer));
    ASSERT_TRUE(parsed) << full_name(peer);
    EXPECT_EQ(parsed->impl, peer.impl);
    EXPECT_EQ(parsed->shape, peer.shape);
    EXPECT_EQ(parsed->angles, peer.angles);
    EXPECT_EQ(parsed->storage, "bf16");
    EXPECT_FALSE(parse_rope_case(full_name(peer)));
    EXPECT_FALSE(parse_fused_cache_case(full_name(peer)));
  }
  EXPECT_FALSE(parse_qk_norm_rope_case("plugin/torch_vllm_cache/llama3_8b_gqa_prefill4096/nhd_bf16/real_time"));
  EXPECT_FALSE(parse_qk_norm_rope_case("other/torch_vllm_rope/qwen3_8b_prefill8192/cache_bf16/real_time"));
}

TEST(CaseName, MalformedNamesAreRefused) {
  for (const char* bad : {"", "kernel/avx2", "kernel/avx2/llama7b_prefill512/diagonal/real_time/threads:1",
                          "kernel/avx2/llama7b_prefill512/interleaved/real_time/threads:",
                          "kernel/avx2/llama7b_prefill512/interleaved/real_time/threads:0",
                          "kernel/avx2/llama7b_prefill512/interleaved/real_time/threads:1x",
                          "kernel/avx2/llama7b_prefill512/interleaved/cpu_time/threads:1",
                          "plugin/ggml/llama7b_prefill512/interleaved/threads:1/real_time",
                          "plugin/ggml/llama7b_prefill512/interleaved/manual_time/threads:1",
                          "kernel//llama7b_prefill512/interleaved/real_time/threads:1"}) {
    EXPECT_FALSE(parse_rope_case(bad)) << bad;
  }
  for (const char* bad : {"attention_blas/causal_8heads/tokens:512/head_dim:64/blas_threads:1",
                          "attention_blas/causal_8/tokens:512/head_dim:64/blas_threads:1/real_time",
                          "attention_blas/causal_8heads/tokens:-5/head_dim:64/blas_threads:1/real_time",
                          "attention/causal_8heads/tokens:512/head_dim:64/blas_threads:1/real_time",
                          "attention_naive/causal_8heads/tokens:512/head_dim:64/blas_threads:1/real_time",
                          // kv heads that do not divide the q heads, or equal them (one spelling each)
                          "attention_blas/causal_8heads_3kv/tokens:512/head_dim:64/blas_threads:1/real_time",
                          "attention_blas/causal_8heads_8kv/tokens:512/head_dim:64/blas_threads:1/real_time",
                          "attention_blas/causal_8heads_kv/tokens:512/head_dim:64/blas_threads:1/real_time",
                          "attention_blas/causal_8heads_2/tokens:512/head_dim:64/blas_threads:1/real_time",
                          // a peer counts its own threads, an own form its team's
                          "plugin/ggml_flash_attn/causal_8heads/tokens:512/head_dim:128/blas_threads:1/real_time",
                          "attention_blas/causal_8heads/tokens:512/head_dim:128/threads:1/real_time",
                          "plugin//causal_8heads/tokens:512/head_dim:128/threads:1/real_time",
                          "other/ggml/causal_8heads/tokens:512/head_dim:128/threads:1/real_time"}) {
    EXPECT_FALSE(parse_attention_case(bad)) << bad;
  }
  EXPECT_FALSE(parse_table_case("sinusoidal/formula/transformer_base_4096x512"));
  for (const char* bad : {"conversion_fp16/avx512/gpt2_small_prefill512/real_time",
                          "conversion_fp16/avx512/gpt2_small_prefill512/real_time/threads:0",
                          "conversion_/avx512/gpt2_small_prefill512/real_time/threads:1",
                          "kernel_fp16/avx512/gpt2_small_prefill512/real_time/threads:1",
                          "conversion_fp16/avx512/gpt2_small_prefill512/cpu_time/threads:1",
                          "conversion_fp16//gpt2_small_prefill512/real_time/threads:1"}) {
    EXPECT_FALSE(parse_conversion_case(bad)) << bad;
  }
}

// What Google Benchmark reports for cases registered the way bench/ registers them.
class NameCollector : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) names.push_back(run.benchmark_name());
  }
  std::vector<std::string> names;
};

TEST(CaseName, GoogleBenchmarkReportsTheFullName) {
  const RopeCaseName rope{"kernel/avx2", "llama7b_prefill512", "half_split", 2};
  const RopeCaseName plugin{"plugin/ggml", "llama7b_prefill512", "half_split", 2, true};
  const AttentionCaseName attention{kAttentionHeads, 512, 64, 1};
  const TableCaseName table{"sinusoidal/formula", "transformer_base_4096x512"};
  const ConversionCaseName conversion{"conversion_bf16/avx512", "gpt2_small_prefill512", 2};
  const auto nothing = [](benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(state.iterations());
  };
  benchmark::RegisterBenchmark(registered_name(rope).c_str(), nothing)->UseRealTime()->Threads(2);
  const auto manual = [](benchmark::State& state) {
    for (auto _ : state) state.SetIterationTime(1e-6);
  };
  // As bench/rope_cases.cc registers a plugin: the call's threads as an argument, manual time.
  benchmark::RegisterBenchmark(registered_name(plugin).c_str(), manual)->UseManualTime()->ArgName("threads")->Arg(2);
  benchmark::RegisterBenchmark(registered_name(attention).c_str(), nothing)->UseRealTime();
  benchmark::RegisterBenchmark(registered_name(table).c_str(), nothing)->UseRealTime();
  benchmark::RegisterBenchmark(registered_name(conversion).c_str(), nothing)->UseRealTime()->Threads(2);
  // The run length as a flag, as `ropecheck bench` sets it: per-case settings would enter the name.
  // The filter and the repetitions too: Google Benchmark keeps flags in globals, and another test
  // of this process may have run `ropecheck bench` with its own.
  int argc = 4;
  char program[] = "case_name_test", min_time[] = "--benchmark_min_time=0.001",
       filter[] = "--benchmark_filter=.", repetitions[] = "--benchmark_repetitions=1";
  char* argv[] = {program, min_time, filter, repetitions, nullptr};
  benchmark::Initialize(&argc, argv);
  NameCollector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);
  benchmark::ClearRegisteredBenchmarks();
  EXPECT_EQ(collector.names, (std::vector<std::string>{full_name(rope), full_name(plugin), full_name(attention),
                                                       full_name(table), full_name(conversion)}));
  ASSERT_EQ(collector.names.size(), 5u);
  EXPECT_TRUE(parse_rope_case(collector.names[0]));
  EXPECT_TRUE(parse_rope_case(collector.names[1]));
  EXPECT_TRUE(parse_attention_case(collector.names[2]));
  EXPECT_TRUE(parse_table_case(collector.names[3]));
  EXPECT_TRUE(parse_conversion_case(collector.names[4]));
}

TEST(Shapes, FoundByName) {
  ASSERT_NE(find_rope_shape("llama7b_prefill4096"), nullptr);
  EXPECT_EQ(find_rope_shape("llama7b_prefill4096")->tokens, 4096);
  EXPECT_EQ(find_rope_shape("no_such_shape"), nullptr);
}

}  // namespace
}  // namespace ropecheck::bench
