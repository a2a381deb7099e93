// Random RoPE problems for the properties, picked inside a RapidCheck property with `*gen` so that
// every piece shrinks and shows in a counterexample: a spec, a GQA shape, positions, q and k.
#pragma once

#include <cstdint>
#include <vector>

#include "properties/harness/generators.h"
#include "properties/harness/rope_harness.h"
#include "core/tensor.h"
#include "core/tolerance.h"

namespace ropecheck {

// The size budget of a random case at switching sizes: 2^17 floats of q and k (512 KiB, an L2's
// worth), so that a property's 100 cases stay within a second on a scalar reference; the real
// prefill sizes are the model shapes' cases.
inline constexpr std::int64_t kSwitchCaseElements = std::int64_t{1} << 17;

struct QkCase {
  RopeSpec spec;
  std::int64_t tokens = 0;
  std::int64_t q_heads = 0;  // a multiple of k_heads (grouped-query attention)
  std::int64_t k_heads = 0;
  std::vector<std::int64_t> positions;
  std::vector<float> q;
  std::vector<float> k;
  StorageType storage = StorageType::fp32;  // q and k hold values of this type exactly

  std::int64_t group() const { return q_heads / k_heads; }
  ErrorModel model() const { return error_model(spec, storage); }
};

// Must be called inside a RapidCheck property. Three cases in four small (up to 8 tokens, 1-3 kv
// heads, groups of 1-3); the fourth at the sizes where loops switch: tokens and heads each
// 2^k - 1, 2^k or 2^k + 1, within kSwitchCaseElements of q and k together. With a model shape in
// force (model_shape_cases.h), its tokens, heads, head_dim and rotary_dim instead.
// q and k are rounded to the implementation's storage type, so that the oracle and the
// implementation see the same input (the tolerance then needs no input-rounding term).
// `pass`: the spec's (spec.h); a backward case's q and k are the gradients dL/dy.
QkCase pick_qk_case(const RopeCapabilities& caps, Rotary rotary, Pass pass = Pass::forward);

// The same with the attention factor pinned to 1 (the frequencies keep their scaling): for the
// properties of the rotation group (identity at 0, inverse, composition, relative position),
// which a rotation scaled by a != 1 does not satisfy; norm_preservation checks the factor.
QkCase pick_rotation_case(const RopeCapabilities& caps, Rotary rotary, Pass pass = Pass::forward);

// An implementation's outputs q and k for c.q and c.k against the oracle, every element within
// rotation_bound_units of c's error model (oracle_agreement's check): the worse of the two, and
// which tensor it is ("q" or "k").
struct OracleWorst {
  WorstElement worst;
  std::string_view tensor;
};
OracleWorst worst_against_oracle(const QkCase& c, std::span<const float> q, std::span<const float> k);

// One [tokens][heads][head_dim] tensor's worth of finite floats in the range an implementation
// storing `storage` is given (storage_float), not yet rounded to it; drawn value by value up to
// kShrinkableElements, else from a seed (model_shape_cases.h's pick_floats).
std::vector<float> pick_tensor(const RopeSpec& spec, std::int64_t tokens, std::int64_t heads,
                               StorageType storage, const std::string& name);

// x with every value rounded to the storage type (unchanged for fp32).
void round_to_storage(std::vector<float>& x, StorageType storage);

// Pair norms |(x_a, x_b)| of every rotary pair, [tokens][heads][rotary_dim/2], in double.
std::vector<double> pair_norms(const RopeSpec& spec, const std::vector<float>& x);
// The same through unit_pair_norm (tolerance.h): the norms errors are measured in units of.
std::vector<double> unit_pair_norms(const RopeSpec& spec, StorageType storage,
                                    const std::vector<float>& x);

}  // namespace ropecheck
