// The RunConfig the property tests use: ropecheck's fixed default seed, unless RC_PARAMS is set
// (RC_PARAMS="seed=42 max_success=1000" or a "reproduce=..." string from a failure line).
#pragma once

#include <rapidcheck.h>

#include <cstdlib>
#include <ostream>
#include <string>

#include "properties/property.h"

namespace rc::detail {
std::string reproduceMapToString(const std::unordered_map<std::string, Reproduce>& map);
}  // namespace rc::detail

namespace ropecheck {

// verify's default (property.h): the tests call at the thread counts a user's verify does.
inline constexpr int kTestCallThreads = kDefaultVerifyThreads;

// The model shapes the property tests run: the environment's ROPECHECK_MODEL_SHAPES (all, short
// or none), else the build's (tests/CMakeLists.txt's ROPECHECK_TEST_MODEL_SHAPES).
inline RunConfig test_run_config() {
  RunConfig config;
  // Calls on 1 to 8 threads and larger counts, whatever this machine has: the same cases
  // everywhere, uneven splits included.
  config.threads = kTestCallThreads;
  const char* shapes = std::getenv("ROPECHECK_MODEL_SHAPES");
  config.model_shapes = parse_model_shape_set(shapes != nullptr ? shapes : ROPECHECK_TEST_MODEL_SHAPES,
                                              "ROPECHECK_MODEL_SHAPES");
  if (std::getenv("RC_PARAMS") != nullptr) {
    const auto& rc_config = rc::detail::configuration();
    config.seed = rc_config.testParams.seed;
    config.cases = rc_config.testParams.maxSuccess;
    if (!rc_config.reproduce.empty()) {
      config.reproduce = rc::detail::reproduceMapToString(rc_config.reproduce);
    }
  }
  return config;
}

// "rotation_matrix/scalar" -> "rotation_matrix_scalar": gtest parameter names are identifiers.
inline std::string test_name(std::string id) {
  for (char& ch : id) {
    if (ch == '/') ch = '_';
  }
  return id;
}

// gtest prints parameters in test listings: show ids, not bytes.
inline void PrintTo(const RopeImpl* impl, std::ostream* os) {
  *os << (impl != nullptr ? impl->id() : std::string_view("(no implementation)"));  // a failed ASSERT_NE prints it
}
inline void PrintTo(const Subject& subject, std::ostream* os) { *os << subject.id; }

inline std::string describe_failure(const PropertyResult& r) {
  return r.message + "\ncounterexample:\n" + r.counterexample + "reproduce: RC_PARAMS=\"reproduce=" +
         r.reproduce + "\"";
}

}  // namespace ropecheck
