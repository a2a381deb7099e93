// The calls of the case running now, and how a counterexample prints them (call_record.h).
#include "properties/harness/call_record.h"

#include <fmt/format.h>

#include <algorithm>

namespace ropecheck {
namespace {

thread_local std::vector<RecordedCall> calls;

// Up to this many positions print whole; a longer list prints its ends.
constexpr std::size_t kWholeList = 16;
constexpr std::size_t kHead = 8, kTail = 4;
// The last calls of a case shown (one that splits a call head by head makes dozens).
constexpr std::size_t kCallsShown = 4;

}  // namespace

void record_call(RecordedCall call) { calls.push_back(std::move(call)); }
const std::vector<RecordedCall>& recorded_calls() { return calls; }
void forget_calls() { calls.clear(); }

std::string describe_positions(std::span<const std::int64_t> positions) {
  if (positions.size() <= kWholeList) return fmt::format("[{}]", fmt::join(positions, ", "));
  const auto [lo, hi] = std::minmax_element(positions.begin(), positions.end());
  return fmt::format("[{}, ..., {}] ({} positions, {} to {})", fmt::join(positions.first(kHead), ", "),
                     fmt::join(positions.last(kTail), ", "), positions.size(), *lo, *hi);
}

// A multi-axis call's positions as one tuple a token: "(t,h,w)=[(0,0,0), (1,3,5)]".
std::string describe_axis_positions(std::span<const std::int64_t> positions, int axes) {
  std::vector<std::string> tokens;
  for (std::size_t t = 0; t + static_cast<std::size_t>(axes) <= positions.size(); t += static_cast<std::size_t>(axes)) {
    tokens.push_back(fmt::format("({})", fmt::join(positions.subspan(t, static_cast<std::size_t>(axes)), ",")));
  }
  const char* names = axes == 2 ? "(row,column)" : "(t,h,w)";
  if (tokens.size() <= kWholeList) return fmt::format("{}=[{}]", names, fmt::join(tokens, ", "));
  return fmt::format("{}=[{}, ..., {}] ({} tokens)", names,
                     fmt::join(std::span(tokens).first(kHead), ", "),
                     fmt::join(std::span(tokens).last(kTail), ", "), tokens.size());
}

std::string describe_call(const RecordedCall& call) {
  std::string text = fmt::format("{}: tokens={} heads={} kv_heads={} threads={}", call.implementation,
                                 call.tokens, call.heads, call.kv_heads, call.threads);
  if (call.shift != 0) text += fmt::format(" shift={} floats", call.shift);
  const int axes = axis_count(call.spec);
  const std::string positions = axes == 1 ? "=" + describe_positions(call.positions)
                                          : describe_axis_positions(call.positions, axes);
  return text + fmt::format(" positions{}\n  spec: {}", positions, describe(call.spec));
}

std::string describe_calls(const std::vector<RecordedCall>& recorded) {
  std::string text;
  const std::size_t first = recorded.size() > kCallsShown ? recorded.size() - kCallsShown : 0;
  if (first > 0) text += fmt::format("({} earlier calls of the case not shown)\n", first);
  for (std::size_t i = first; i < recorded.size(); ++i) {
    const std::string heading = recorded.size() == 1
                                    ? std::string("the call that failed")
                                    : fmt::format("call {} of {}{}", i + 1, recorded.size(),
                                                  i + 1 == recorded.size() ? ", the last before the failure" : "");
    text += heading + ": " + describe_call(recorded[i]) + "\n";
  }
  return text;
}

}  // namespace ropecheck
