// The kill matrix: every mutant (a deliberately wrong implementation, one real bug each) must be
// caught by at least one property, and by the properties whose statement its bug contradicts.
// A surviving mutant means a property has lost its teeth.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "properties/property.h"
#include "impls/registry.h"
#include "tests/support/readable_counterexample.h"
#include "tests/support/test_config.h"

namespace ropecheck {
namespace {

// Kills that follow from the maths of each bug, not from luck of the draw.
const std::map<std::string, std::set<std::string>>& required_kills() {
  static const std::map<std::string, std::set<std::string>> kills = {
      // pairs (i, i + r/2) where the data pairs (2i, 2i+1): seed 002's warning
      {"mutant/rotate_half_unpermuted", {"oracle_agreement", "layout_equivalence"}},
      // R_-m instead of R_m: still a rotation group, only the truth tells
      {"mutant/sin_sign_flipped", {"oracle_agreement"}},
      // R_(m+1): R_0 is no longer I, and <R_(m+1) q, R_(n+1) k> != <q, R_(n-m+1) k>
      {"mutant/position_off_by_one", {"oracle_agreement", "identity_at_zero", "relative_position"}},
      {"mutant/frequency_index_reversed", {"oracle_agreement"}},
      {"mutant/fp16_angles", {"oracle_agreement"}},
      {"mutant/bf16_angles", {"oracle_agreement"}},
      {"mutant/frequencies_from_head_dim", {"oracle_agreement"}},
      // |R_m x| = |x| instead of a |x| under YaRN/LongRoPE
      {"mutant/attention_factor_ignored", {"oracle_agreement", "norm_preservation"}},
      {"mutant/rotary_dim_ignored", {"tail_untouched", "oracle_agreement"}},
      // up to one fp16 ulp (twice the bound) truncated, subnormals flushed; |y| shrinks too
      {"mutant/fp16_truncating_store", {"oracle_agreement", "norm_preservation"}},
      // one float stored past the end: the harness's guard bytes, whatever the property
      {"mutant/writes_past_end", {"oracle_agreement", "identity_at_zero", "tail_untouched"}},
      // NaN, Inf and overflows stored as 0: only non-finite and huge inputs show it
      {"mutant/nonfinite_scrubbed", {"nonfinite_propagation"}},
      // one NaN poisons its whole head: only the pairs beside a NaN show it
      {"mutant/nan_spreads_across_head", {"nonfinite_propagation"}},
      // dynamic NTK's grown base kept after a long call: only a call after a longer one shows it
      {"mutant/dynamic_ntk_base_kept", {"call_history_independence"}},
      // a row's token found through a 16-bit row index: only a call past 65 536 rows shows it
      {"mutant/row_index_16bit", {"boundary_shapes"}},
      // the kernels' paths (kernel_path_mutants.cc): each shows only on its path, which the
      // cases reach on purpose: a split's short last chunk (threads drawn per call), a prefill
      // past 16384 rows (the model shapes; positions 0 there tell R_0 from the tile's guess),
      // heads wider than 128, positions past 65535
      {"mutant/kernel_split_floor_chunks", {"oracle_agreement"}},
      // wrong only where tokens % threads >= 2: from 3 threads on, which verify draws on any machine
      {"mutant/kernel_split_remainder_one", {"oracle_agreement"}},
      {"mutant/kernel_prefill_tile_positions", {"identity_at_zero"}},
      {"mutant/kernel_wide_head_halves", {"oracle_agreement"}},
      {"mutant/kernel_long_context_rows", {"oracle_agreement"}},
#if defined(__aarch64__)
      // the NEON kernel's interleaved table with its zip halves swapped: pairs of each four
      // rotate by each other's angles (rotations still: the truth tells), and a partial last
      // block of angles moves its zero lanes in front (pairs wiped: the norm and R_0 = I tell)
      {"mutant/neon_zip_halves_swapped", {"oracle_agreement", "norm_preservation", "identity_at_zero"}},
      // the SVE kernel's partial last vector left unrotated: the truth, at every vector length
      // (every even head_dim is drawn, so most are no multiple of it)
      {"mutant/sve_tail_predicate_dropped", {"oracle_agreement"}},
#endif
      // multi-axis ports (multi_axis_mutants.cc): a pair in the wrong section, h and w swapped,
      // the interleaving one pair off: rotations still, only the truth and a section's locality
      // (moving one axis moves only its pairs) tell
      {"mutant/mrope_section_off_by_one", {"oracle_agreement", "section_locality"}},
      {"mutant/mrope_axes_swapped", {"oracle_agreement", "section_locality"}},
      {"mutant/imrope_offset_wrong", {"oracle_agreement", "section_locality"}},
      // a pair's two features rotated by two axes' positions: no rotation any more
      {"mutant/mrope_section_not_doubled",
       {"oracle_agreement", "norm_preservation", "relative_position", "section_locality"}},
      // the vision tower's restarting frequencies in MRoPE: a text token is no longer 1D RoPE
      {"mutant/mrope_frequencies_restarted", {"oracle_agreement", "axes_equal_is_1d"}},
      // backward kernels (backward_mutants.cc), the forward right in each: R_m dy for R_m^T dy
      // is still a rotation, so the truth, the adjoint and R^T R = I tell, not the norm
      {"mutant/backward_sin_not_flipped",
       {"backward_oracle_agreement", "adjoint_identity", "backward_inverts_forward"}},
      // the gradient a times too small under YaRN/LongRoPE: its norm, its adjoint, R^T R x = x
      {"mutant/backward_attention_factor_dropped",
       {"backward_oracle_agreement", "adjoint_identity", "backward_inverts_forward",
        "backward_norm_preservation"}},
      // the tail's products cancel in <R x, dy> - <x, R^T dy> only with the tail's gradient
      {"mutant/backward_tail_zeroed", {"adjoint_identity", "backward_tail_untouched"}},
      // fused RoPE rotating every query block by the first block's positions: shift-invariant
      // still, right within the first block; only the comparison with separate RoPE shows it
      {"mutant/attention_fused_block_positions", {"attention_rope_matches_reference"}},
      // seed 001's attention: rotated q, k overwritten by unrotated ones -> position-blind
      {"mutant/attention_unrotated_qk",
       {"attention_rope_breaks_equivariance", "mha_positions_break_equivariance"}},
      // an F16 KV cache whose P V sum is kept in fp16 too (ggml-cpu's vector path): inside the
      // F16 K,V bound where random scores' own terms dominate; equal scores leave the sum alone
      {"mutant/attention_fp16_accumulator", {"attention_equal_scores_average"}},
      // the fused cache call's (rope_cache_mutants.cc): padding's -1 wrapped to the last slot,
      // which no valid token addresses (the cases keep the last block free)
      {"mutant/cache_slot_minus_one_indexed", {"cache_untouched_elsewhere", "padding_inert"}},
      // rows in the wrong place: the truth misses them, and where they land was not addressed
      {"mutant/cache_block_offset_swapped", {"cache_oracle_agreement", "cache_untouched_elsewhere"}},
      {"mutant/cache_hnd_stride_on_nhd", {"cache_oracle_agreement", "cache_untouched_elsewhere"}},
      // x * s for x / s: off by s^2, which the amax-derived scales keep far from 1
      {"mutant/cache_scale_direction_flipped", {"cache_oracle_agreement", "cache_dequantized_bound"}},
      // NaN (e4m3) or Inf (e5m2) past the largest: only values past it show it
      {"mutant/cache_fp8_unsaturated", {"fp8_saturates"}},
      {"mutant/cache_v_in_k_place", {"cache_oracle_agreement"}},
      // a padding token's q rotated under skip_token
      {"mutant/cache_padding_q_rotated", {"padding_inert", "cache_oracle_agreement"}},
      {"mutant/cache_v_scale_dropped", {"cache_oracle_agreement", "cache_dequantized_bound"}},
      // the call forms' (rope_form_mutants.cc): rows read or written where another stride puts
      // them, so the truth misses them and what they overwrite was not the call's
      {"mutant/form_k_with_q_head_stride", {"form_oracle_agreement", "form_untouched_outside"}},
      {"mutant/form_strides_ignored", {"form_oracle_agreement", "form_untouched_outside"}},
      // the tail rotated: the truth and the tail's own property
      {"mutant/qk_norm_rotary_dim_ignored", {"form_oracle_agreement", "qk_norm_tail_not_rotated"}},
      {"mutant/cache_cos_sin_same_index", {"form_oracle_agreement", "form_cache_last_row"}},
      // 0 / 0 for a head of zeros; a small head's norm off by far more than the bound
      {"mutant/qk_norm_eps_dropped", {"qk_norm_zero_head_finite", "form_oracle_agreement"}},
      {"mutant/qk_norm_weight_convention_swapped", {"form_oracle_agreement", "qk_norm_tail_not_rotated"}},
      // one or two more roundings to bf16/fp16: past the fp32 norm's bound in 16-bit storage
      {"mutant/qk_norm_in_storage_type", {"form_oracle_agreement"}},
      // only the many-heads-by-many-tokens cases reach the path
      {"mutant/form_wide_path_partial_nan", {"form_oracle_agreement"}},
      // seed 001: cos at 2i+1 uses exponent (2i+1)/d
      {"mutant/sinusoid_exponent_i_over_d",
       {"sinusoidal_pe_at_one_d512", "sinusoidal_shift_is_rotation"}},
  };
  return kills;
}

class MutantKill : public ::testing::TestWithParam<Subject> {};

TEST_P(MutantKill, IsKilled) {
  const Subject& mutant = GetParam();
  // A kernel level's mutant where this CPU lacks the level (mutant/sve_tail_predicate_dropped
  // without SVE): every property skips it, so nothing here can kill it (verify --mutants leaves
  // it out likewise).
  if (mutant.rope != nullptr) {
    if (const auto caps = mutant.rope->capabilities(); !caps.available) GTEST_SKIP() << caps.unavailable_reason;
  }
  std::set<std::string> killed_by;
  // The build's model shapes (the short ones; none in the sanitizer build, where the 22 mutants
  // at every short shape took minutes), but the kernels' path mutants always have the short
  // ones: a model shape is where their paths are sure to be taken (a prefill past 16384 rows,
  // Gemma's 256-wide heads, decode at 131071), whatever the 25 random cases of that build draw.
  RunConfig config = test_run_config();
  if (mutant.id.starts_with("mutant/kernel_")) config.model_shapes = ModelShapeSet::short_calls;
  for (const Property& property : property_catalogue()) {
    const auto result = run_property(property, mutant, config);
    if (result.status == Status::failed) {
      killed_by.insert(std::string(property.id));
      EXPECT_FALSE(result.counterexample.empty() && result.message.empty())
          << property.id << ": a failure must say why";
      // Read as a porter reads it: the call that failed, every value named, no source lines.
      const bool rope = property.kind == SubjectKind::rope && !result.reproduce.empty();
      EXPECT_EQ(test::unreadable_counterexample(result.message, result.counterexample, rope), "")
          << property.id << ":\n" << result.message << "\n" << result.counterexample;
    }
  }
  EXPECT_FALSE(killed_by.empty()) << mutant.id << " SURVIVED every property";
  const auto required = required_kills().find(mutant.id);
  ASSERT_NE(required, required_kills().end()) << "add " << mutant.id << " to required_kills()";
  for (const auto& property : required->second) {
    EXPECT_TRUE(killed_by.count(property)) << mutant.id << " not killed by " << property;
  }
  std::string list;
  for (const auto& p : killed_by) list += p + " ";
  RecordProperty("killed_by", list);
}

INSTANTIATE_TEST_SUITE_P(Mutants, MutantKill, ::testing::ValuesIn(registry_subjects(true)),
                         [](const ::testing::TestParamInfo<Subject>& info) {
                           return test_name(info.param.id);
                         });

}  // namespace
}  // namespace ropecheck
