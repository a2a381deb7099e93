// apply_guarded() and the evidence counter (guarded_apply.h).
#include "properties/harness/guarded_apply.h"

#include <fmt/format.h>
#include <rapidcheck.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "properties/harness/call_record.h"
#include "properties/harness/model_shape_cases.h"
#include "properties/harness/rope_harness.h"

namespace ropecheck {
namespace {

// 4 KiB after each tensor: past a vector tile's remainder and a cache line or two of overrun.
constexpr std::size_t kGuardFloats = 1024;
// A signalling-NaN payload no rotation produces: a store of any computed value changes it.
constexpr std::uint32_t kGuardBits = 0x7fa5a5a5u;

thread_local EvidenceCount current;
thread_local int call_threads_limit = 1;

// x at `shift` floats into a buffer, guard floats before it and kGuardFloats after it.
// Written once (guards, tensor, guards), not zeroed, guarded and copied over: a model shape's
// tensors are tens of MB.
std::vector<float> with_guard(const std::vector<float>& x, std::size_t shift) {
  constexpr float guard = std::bit_cast<float>(kGuardBits);  // copied as bits, never computed on
  std::vector<float> buffer;
  buffer.reserve(shift + x.size() + kGuardFloats);
  buffer.insert(buffer.end(), shift, guard);
  buffer.insert(buffer.end(), x.begin(), x.end());
  buffer.insert(buffer.end(), kGuardFloats, guard);
  return buffer;
}

// Copies the tensor back into x; RC_FAILs when a guard float changed.
void check_guard(const RopeImpl& impl, const std::vector<float>& buffer, std::size_t shift,
                 std::vector<float>& x, const char* name) {
  const std::size_t end = shift + x.size();
  for (std::size_t i = 0; i < buffer.size(); ++i) {
    if (i == shift) i = end;  // the tensor itself
    if (i >= buffer.size()) break;
    std::uint32_t bits = 0;
    std::memcpy(&bits, &buffer[i], sizeof(bits));
    if (bits == kGuardBits) continue;
    if (i < shift) {
      RC_FAIL(fmt::format("{} wrote before the start of {}: guard float {} before it changed to "
                          "{:#010x}", impl.id(), name, shift - i, bits));
    }
    RC_FAIL(fmt::format("{} wrote past the end of {} ({} floats): guard float {} after the end "
                        "changed to {:#010x}", impl.id(), name, x.size(), i - end, bits));
  }
  std::copy(buffer.begin() + static_cast<std::ptrdiff_t>(shift),
            buffer.begin() + static_cast<std::ptrdiff_t>(end), x.begin());
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
                   std::span<const std::int64_t> positions, Evidence evidence, std::size_t shift) {
  const auto why_vacuous = vacuity(spec, q, k, positions, evidence);
  ++current.calls;
  if (why_vacuous.empty()) {
    ++current.informative;
  } else if (current.first_vacuous.empty()) {
    current.first_vacuous = why_vacuous;
  }
  const auto tokens = static_cast<std::int64_t>(positions.size()) / axis_count(spec);  // token-major axes
  auto q_buffer = with_guard(q, shift);
  auto k_buffer = with_guard(k, shift);
  const HeadTensor q_view{std::span(q_buffer).subspan(shift, q.size()), tokens, q_heads, spec.head_dim};
  RecordedCall call{std::string(impl.id()), spec, tokens, q_heads, k.empty() ? 0 : k_heads, 1,
                    std::vector<std::int64_t>(positions.begin(), positions.end()), shift};
  if (k.empty()) {
    record_call(std::move(call));
    impl.apply(spec, q_view, positions);
  } else {
    const CallThreads threads = pick_call_threads();
    call.threads = threads.count;
    record_call(std::move(call));
    impl.apply(spec, q_view,
               HeadTensor{std::span(k_buffer).subspan(shift, k.size()), tokens, k_heads, spec.head_dim},
               positions, threads.count);
  }
  check_guard(impl, q_buffer, shift, q, "q");
  check_guard(impl, k_buffer, shift, k, "k");
}

rc::Gen<CallThreads> call_threads(int limit) {
  const auto as_threads = [](int n) { return CallThreads{n}; };
  if (limit <= kEveryThreadCountUpTo) {
    return rc::gen::map(rc::gen::inRange(1, std::max(limit, 1) + 1), as_threads);
  }
  std::vector<int> larger;
  for (const int n : {9, 12, 13, 16, 17, 24, 31, 32, 33, 48, 63, 64}) {
    if (n <= limit) larger.push_back(n);
  }
  if (larger.empty() || larger.back() != limit) larger.push_back(limit);
  return rc::gen::weightedOneOf<CallThreads>(
      {{3, rc::gen::map(rc::gen::inRange(1, kEveryThreadCountUpTo + 1), as_threads)},
       {1, rc::gen::map(rc::gen::elementOf(larger), as_threads)}});
}

CallThreads pick_call_threads() {
  if (call_threads_limit <= 1) return CallThreads{};
  return *at_full_size(call_threads(call_threads_limit)).as("threads");
}

void showValue(CallThreads threads, std::ostream& os) { os << threads.count; }
void set_call_threads_limit(int threads) { call_threads_limit = std::max(threads, 1); }

void reset_evidence() { current = {}; }
EvidenceCount evidence() { return current; }

}  // namespace ropecheck
