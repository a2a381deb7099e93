// call_history_independence: a call's result depends on that call alone. Kernels keep state
// between calls (a cos/sin cache, a grown dynamic-NTK base, a thread-local table) and see more
// than one problem at a time (a batch of heads, q with k), and each is a place where a result can
// come to depend on what came before or beside it. Per case:
//   - the same call twice gives the same bits (the first is the reference);
//   - after another call (other positions, a longer call, another spec, or a dynamic-NTK call past
//     the original length when the case is one within it) the call gives the reference's bits;
//   - at other addresses and alignments (the tensors 1 to 15 floats into their buffers), the
//     reference's bits;
//   - one head at a time, and q and k in separate calls, within the bound of the float64 oracle
//     (other calls: their rounding may differ, their accuracy may not).
#include <fmt/format.h>

#include <cstring>

#include "properties/catalogue.h"
#include "properties/harness/guarded_apply.h"
#include "properties/harness/model_shape_cases.h"
#include "properties/harness/rapidcheck_bridge.h"
#include "properties/harness/rope_cases.h"
#include "properties/harness/rope_harness.h"
#include "core/tolerance.h"
#include "impls/oracle/oracle.h"

namespace ropecheck {
namespace {

enum class History { other_positions, longer_call, other_spec, dynamic_ntk_long_call };

void showValue(History history, std::ostream& os) {
  constexpr const char* kNames[] = {"other positions", "a longer call", "another spec",
                                    "a dynamic NTK call past its original length"};
  os << kNames[static_cast<int>(history)];
}

struct Outputs {
  std::vector<float> q, k;
};

Outputs call(const RopeImpl& impl, const QkCase& c, std::size_t shift = 0) {
  Outputs out{c.q, c.k};
  apply_guarded(impl, c.spec, out.q, c.q_heads, out.k, c.k_heads, c.positions, Evidence::rotation,
                shift);
  return out;
}

// "" when both calls gave the same bits, else the first element that differs.
std::string first_difference(const Outputs& want, const Outputs& got) {
  for (const auto& [name, a, b] : {std::tuple{"q", &want.q, &got.q}, {"k", &want.k, &got.k}}) {
    for (std::size_t i = 0; i < a->size(); ++i) {
      if (std::memcmp(&(*a)[i], &(*b)[i], sizeof(float)) != 0) {
        return fmt::format("{} element {}: {:.9g}, the reference call gave {:.9g}", name, i,
                           (*b)[i], (*a)[i]);
      }
    }
  }
  return "";
}

// The call made before the case's: what `history` says, on the same implementation.
QkCase call_before(const RopeCapabilities& caps, QkCase& c, History history) {
  QkCase before = c;
  switch (history) {
    case History::other_positions:
      before.positions = *position_ids(c.positions.size(), position_limit(caps)).as("positions of the call before");
      break;
    case History::longer_call: {  // three times the tokens, the case's positions first
      // At a model shape's size a quarter more (a prefill's three times would be 400 MB).
      const std::size_t more = model_shape_in_force() != nullptr ? c.positions.size() / 4 + 1
                                                                 : 2 * c.positions.size();
      const auto extra = *position_ids(more, position_limit(caps)).as("the longer call's further positions");
      before.positions.insert(before.positions.end(), extra.begin(), extra.end());
      before.tokens = static_cast<std::int64_t>(before.positions.size()) / axis_count(c.spec);
      before.q = pick_tensor(c.spec, before.tokens, c.q_heads, c.storage, "q of the call before");
      before.k = pick_tensor(c.spec, before.tokens, c.k_heads, c.storage, "k of the call before");
      round_to_storage(before.q, c.storage);
      round_to_storage(before.k, c.storage);
      break;
    }
    case History::other_spec: before = pick_qk_case(caps, Rotary::any); break;
    case History::dynamic_ntk_long_call: {
      // The case becomes dynamic NTK within its original length; the call before it, the same
      // spec past it (HF's dynamic NTK grows the base there and must shrink it back).
      c.spec.scaling = *scaling_of(ScalingKind::dynamic_ntk, c.spec.rotary_dim).as("scaling (replaces the spec's)");
      const std::int64_t original = c.spec.scaling.original_max_position;
      c.spec.scaling.sequence_length = *rc::gen::inRange<std::int64_t>(1, original + 1).as("sequence_length");
      before = c;
      before.spec.scaling.sequence_length =
          original * *rc::gen::inRange<std::int64_t>(2, 9).as("the call before's sequence_length / original_max");
      break;
    }
  }
  return before;
}

// Every q head alone, then k alone: each call's output against the oracle, within its bound.
WorstElement split_calls(const RopeImpl& impl, const QkCase& c) {
  const auto dim = static_cast<std::size_t>(c.spec.head_dim);
  const auto bound = [&](std::size_t t, double theta, int pair) {
    return rotation_bound_units(c.model(), c.positions[t], theta, pair);
  };
  WorstElement worst;
  const auto keep_worse = [&](const WorstElement& w) {
    if (w.ratio > worst.ratio || worst.where.empty()) worst = w;
  };
  for (std::int64_t h = 0; h < c.q_heads; ++h) {
    std::vector<float> head(static_cast<std::size_t>(c.tokens) * dim), none;
    for (std::int64_t t = 0; t < c.tokens; ++t) {
      const auto from = c.q.begin() + static_cast<std::ptrdiff_t>((t * c.q_heads + h) * c.spec.head_dim);
      std::copy(from, from + c.spec.head_dim, head.begin() + static_cast<std::ptrdiff_t>(t * c.spec.head_dim));
    }
    const std::vector<float> input = head;
    apply_guarded(impl, c.spec, head, 1, none, 0, c.positions);
    keep_worse(worst_rotary_error(c.spec, c.storage, input, head,
                                  oracle_rope(c.spec, input, c.tokens, 1, c.positions), 1,
                                  c.positions, bound));
  }
  std::vector<float> k = c.k, none;
  apply_guarded(impl, c.spec, k, c.k_heads, none, 0, c.positions);
  keep_worse(worst_rotary_error(c.spec, c.storage, c.k, k,
                                oracle_rope(c.spec, c.k, c.tokens, c.k_heads, c.positions),
                                c.k_heads, c.positions, bound));
  return worst;
}

PropertyResult call_history_independence(const Subject& subject, const RunConfig& config) {
  return check_rope_property(subject, config, "calls that changed bits",
                             [&](auto& impl, auto& caps, auto& tracker) {
    QkCase c = pick_qk_case(caps, Rotary::any);
    auto history = *rc::gen::element(History::other_positions, History::longer_call,
                                     History::other_spec, History::dynamic_ntk_long_call)
                        .as("the call before");
    if (history == History::dynamic_ntk_long_call &&
        (!caps.implements(ScalingKind::dynamic_ntk) || c.spec.axes.mode == AxisMode::vision)) {
      history = History::other_spec;
    }
    const QkCase before = call_before(caps, c, history);
    const Outputs reference = call(impl, c);
    const auto check = [&](const Outputs& got, std::string_view what) {
      const auto diff = first_difference(reference, got);
      tracker.observe(diff.empty() ? 0.0 : 1.0, 0.0);
      if (!diff.empty()) RC_FAIL(fmt::format("{}: {}", what, diff));
    };
    check(call(impl, c), "the same call again");
    call(impl, before);
    check(call(impl, c), "after another call");
    const auto shift = *rc::gen::inRange<std::size_t>(1, 16).as("shift (floats)");
    check(call(impl, c, shift), fmt::format("with the tensors {} floats further into memory", shift));
    fail_if_over(split_calls(impl, c), "one head at a time, k apart");
  });
}

}  // namespace

std::span<const Property> call_history_properties() {
  static const Property kAll[] = {
      {"call_history_independence",
       "a call gives the same bits twice, after any other call and at any address; one head at a "
       "time and q, k apart, within the bound",
       SubjectKind::rope, call_history_independence},
  };
  return kAll;
}

}  // namespace ropecheck
