// Draws `count` cases with RapidCheck outside a property, quietly and from a fixed seed: the
// tests that count what a case generator reaches (rope_cache and rope_form properties' tests)
// call `draw` once per case. True when every draw returned (none threw or failed).
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <functional>

namespace ropecheck::test {

inline bool draw_cases(int count, std::uint64_t seed, const std::function<void()>& draw) {
  struct Quiet : rc::detail::TestListener {
    void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
    void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
    void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
  } quiet;
  rc::detail::TestParams params;
  params.maxSuccess = count;
  params.seed = seed;
  const auto result = rc::detail::checkTestable([&] { draw(); }, rc::detail::TestMetadata{}, params, quiet);
  return result.is<rc::detail::SuccessResult>();
}

}  // namespace ropecheck::test
