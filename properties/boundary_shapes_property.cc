// boundary_shapes: oracle agreement on the shapes kernels get wrong, each class drawn on purpose
// (properties/harness/boundary_cases.h): one token with many heads, many tokens with one head,
// more than 65 536 rows, the head dims of real models with rotary halves no vector width
// divides, positions at the declared maximum, bases up to 1e7. The bound is oracle_agreement's.
#include <fmt/format.h>

#include <vector>

#include "properties/catalogue.h"
#include "properties/harness/boundary_cases.h"
#include "properties/harness/guarded_apply.h"
#include "properties/harness/rapidcheck_bridge.h"
#include "properties/harness/rope_harness.h"

namespace ropecheck {

PropertyResult boundary_shapes(const Subject& subject, const RunConfig& config) {
  return check_rope_property(subject, config, kPairUnits,
                             [&](auto& impl, auto& caps, auto& tracker) {
    const std::vector<BoundaryShape> shapes(std::begin(kAllBoundaryShapes), std::end(kAllBoundaryShapes));
    const BoundaryShape shape = *rc::gen::elementOf(shapes).as("boundary shape");  // each one case in six
    const QkCase c = pick_boundary_case(caps, shape);
    std::vector<float> q = c.q, k = c.k;
    apply_guarded(impl, c.spec, q, c.q_heads, k, c.k_heads, c.positions);
    const auto [worst, tensor] = worst_against_oracle(c, q, k);
    tracker.observe(worst.error, worst.bound);
    fail_if_over(worst, fmt::format("{} ({} tokens, {} q heads, {} kv heads): {}", to_string(shape),
                                    c.tokens, c.q_heads, c.k_heads, tensor));
  });
}

std::span<const Property> boundary_properties() {
  static const Property kAll[] = {
      {"boundary_shapes",
       "oracle agreement on one token x many heads, many tokens x one head, > 65536 rows, head dims "
       "64-256 with odd rotary halves, positions at the declared maximum, bases to 1e7",
       SubjectKind::rope, boundary_shapes},
  };
  return kAll;
}

}  // namespace ropecheck
