// apply_guarded() and the evidence counter (guarded_apply.h).
#include "properties/harness/guarded_apply.h"

#include <fmt/format.h>
#include <rapidcheck.h>

#include <algorithm>
#include <cstring>

#include "properties/harness/rope_harness.h"

namespace ropecheck {
namespace {

// 4 KiB after each tensor: past a vector tile's remainder and a cache line or two of overrun.
constexpr std::size_t kGuardFloats = 1024;
// A signalling-NaN payload no rotation produces: a store of any computed value changes it.
constexpr std::uint32_t kGuardBits = 0x7fa5a5a5u;

thread_local EvidenceCount current;

std::vector<float> with_guard(const std::vector<float>& x) {
  std::vector<float> buffer(x.size() + kGuardFloats);
  std::copy(x.begin(), x.end(), buffer.begin());
  for (std::size_t i = x.size(); i < buffer.size(); ++i) std::memcpy(&buffer[i], &kGuardBits, sizeof(float));
  return buffer;
}

// Copies the tensor back into x; RC_FAILs when a guard float changed.
void check_guard(const RopeImpl& impl, const std::vector<float>& buffer, std::vector<float>& x,
                 const char* name) {
  for (std::size_t i = x.size(); i < buffer.size(); ++i) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &buffer[i], sizeof(bits));
    if (bits != kGuardBits) {
      RC_FAIL(fmt::format("{} wrote past the end of {} ({} floats): guard float {} after the end "
                          "changed to {:#010x}", impl.id(), name, x.size(), i - x.size(), bits));
    }
  }
  std::copy(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(x.size()), x.begin());
}

// "" when the call can show a bug, else why not.
std::string vacuity(const RopeSpec& spec, const std::vector<float>& q, const std::vector<float>& k,
                    std::span<const std::int64_t> positions, Evidence evidence) {
  if (spec.rotary_dim == 0) return "rotary_dim 0";
  if (positions.empty()) return "no tokens";
  if (evidence == Evidence::rotation &&
      std::all_of(positions.begin(), positions.end(), [](std::int64_t m) { return m == 0; })) {
    return "every position 0";
  }
  const auto dim = static_cast<std::size_t>(spec.head_dim);
  for (const auto* x : {&q, &k}) {
    for (std::size_t row = 0; row * dim < x->size(); ++row) {
      for (int i = 0; i < spec.rotary_dim / 2; ++i) {
        const auto [a, b] = pair_features(spec, i);
        if ((*x)[row * dim + a] != 0.0f || (*x)[row * dim + b] != 0.0f) return "";
      }
    }
  }
  return "every rotary input 0";
}

}  // namespace

void apply_guarded(const RopeImpl& impl, const RopeSpec& spec, std::vector<float>& q,
                   std::int64_t q_heads, std::vector<float>& k, std::int64_t k_heads,
                   std::span<const std::int64_t> positions, Evidence evidence) {
  const auto why_vacuous = vacuity(spec, q, k, positions, evidence);
  ++current.calls;
  if (why_vacuous.empty()) {
    ++current.informative;
  } else if (current.first_vacuous.empty()) {
    current.first_vacuous = why_vacuous;
  }
  const auto tokens = static_cast<std::int64_t>(positions.size());
  auto q_buffer = with_guard(q);
  auto k_buffer = with_guard(k);
  const HeadTensor q_view{std::span(q_buffer).first(q.size()), tokens, q_heads, spec.head_dim};
  if (k.empty()) {
    impl.apply(spec, q_view, positions);
  } else {
    impl.apply(spec, q_view, HeadTensor{std::span(k_buffer).first(k.size()), tokens, k_heads, spec.head_dim},
               positions);
  }
  check_guard(impl, q_buffer, q, "q");
  check_guard(impl, k_buffer, k, "k");
}

void reset_evidence() { current = {}; }
EvidenceCount evidence() { return current; }

}  // namespace ropecheck
