// The RoPE property catalogue: id, the fact it states (and its seed), the function that checks it.
#include "properties/catalogue.h"
#include "properties/harness/rope_property_functions.h"

namespace ropecheck {

std::span<const Property> rope_properties() {
  static const Property kAll[] = {
      {"oracle_agreement",
       "every rotated element within the derived bound of the float64 oracle (DESIGN tolerance model)",
       SubjectKind::rope, oracle_agreement},
      {"norm_preservation", "each rotary pair keeps its norm: a rotation is orthogonal (seed 004)",
       SubjectKind::rope, norm_preservation},
      {"identity_at_zero", "position 0 leaves every feature exactly unchanged (R_0 = I)",
       SubjectKind::rope, identity_at_zero},
      {"tail_untouched", "features past rotary_dim pass through bit for bit (partial rotary)",
       SubjectKind::rope, tail_untouched},
      {"inverse", "rotating by m then by -m gives x back: R_-m R_m = I", SubjectKind::rope,
       inverse},
      {"composition", "rotating by n then by m equals rotating by m + n: R_m R_n = R_(m+n)",
       SubjectKind::rope, composition},
      {"relative_position",
       "<R_m q, R_n k> = <q, R_(n-m) k> = <R_(m+c) q, R_(n+c) k>, with GQA heads (seed 004)",
       SubjectKind::rope, relative_position},
      {"layout_equivalence",
       "rotate-half on HF-permuted W_q, W_k equals the permuted interleaved result; scores equal "
       "(seed 002)",
       SubjectKind::rope, layout_equivalence},
      {"linear_scaling_interpolates",
       "linear scaling by s at position s*k equals unscaled RoPE at k (position interpolation)",
       SubjectKind::rope, linear_scaling_interpolates},
      {"scaling_boundary",
       "dynamic NTK and LongRoPE at sequence length L-1, L, L+1 (L = original_max_position): "
       "oracle agreement, and nothing switches before L+1",
       SubjectKind::rope, scaling_boundary},
      {"long_range_decay",
       "ones-vector score envelope decays below (pi/2)10^(4-8/d) for d=64,128,256 and not for d=4 "
       "(seed 004)",
       SubjectKind::rope, long_range_decay_property},
  };
  return kAll;
}

}  // namespace ropecheck
