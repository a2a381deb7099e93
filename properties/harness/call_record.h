// The calls a property's case made, kept so that a counterexample reads as the call that failed:
// which implementation, the spec that was really used (after the property changed what it drew),
// tokens, heads, kv_heads, threads and positions, each named (benchdnn's problem descriptor, ggml
// test-backend-ops' op parameters). apply_guarded records every call of the case running on this
// thread; check_property forgets them when a case starts and keeps the failing case's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/spec.h"

namespace ropecheck {

struct RecordedCall {
  std::string implementation;
  RopeSpec spec;
  std::int64_t tokens = 0;
  std::int64_t heads = 0;     // q's
  std::int64_t kv_heads = 0;  // k's; 0: q alone
  int threads = 1;
  std::vector<std::int64_t> positions;
  std::size_t shift = 0;  // floats between an aligned buffer and the tensors (a moved address)
};

void record_call(RecordedCall call);
// The calls of the case running on this thread, in order; forget_calls() starts a case.
const std::vector<RecordedCall>& recorded_calls();
void forget_calls();

// One call as lines a porter can read: "<implementation>: tokens=.. heads=.. kv_heads=..
// threads=.. positions=[..]" and "spec: ..." under it.
std::string describe_call(const RecordedCall& call);
// The calls of a failing case, numbered, the failure after the last (the last few of a case that
// made many): "" when it made none.
std::string describe_calls(const std::vector<RecordedCall>& calls);
// Positions as a list; a long one as its first and last few, its count and its range.
std::string describe_positions(std::span<const std::int64_t> positions);

}  // namespace ropecheck
