// The kernels wrong only on a path small single-threaded calls never take (impls/mutants/
// kernel_path_mutants.cc) fail with a shrunk counterexample that still takes that path, and its
// reproduce string replays the same failure: the thread count, the model shape and the wide head
// or far position survive shrinking.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "impls/registry.h"
#include "properties/catalogue.h"
#include "properties/property.h"
#include "tests/support/test_config.h"

namespace ropecheck {
namespace {

struct PathCase {
  const char* mutant;
  const char* property;
  const char* path;  // a regex the shrunk case's message or counterexample must match
};

// The path each mutant needs: two threads or more; three or more (a remainder of 2: drawn on any
// machine, past its CPUs); a model shape's case; a head wider than 128; a position past 65535.
const PathCase kPaths[] = {
    {"mutant/kernel_split_floor_chunks", "oracle_agreement", "threads=([2-9]|[1-9][0-9])"},
    {"mutant/kernel_split_remainder_one", "oracle_agreement", "threads=([3-9]|[1-9][0-9])"},
    {"mutant/kernel_prefill_tile_positions", "identity_at_zero", "at model shape [a-z0-9_]+"},
    {"mutant/kernel_wide_head_halves", "oracle_agreement", "head_dim=(129|1[3-9][0-9]|[2-9][0-9][0-9])"},
    {"mutant/kernel_long_context_rows", "oracle_agreement", "position (6553[6-9]|655[4-9][0-9]|65[6-9][0-9]{2}|6[6-9][0-9]{3}|[7-9][0-9]{4}|[0-9]{6,})"},
};

class PathMutant : public ::testing::TestWithParam<PathCase> {};

TEST_P(PathMutant, FailsAndItsShrunkReplayKeepsThePath) {
  const PathCase& c = GetParam();
  const RopeImpl* impl = find_rope(c.mutant);
  ASSERT_NE(impl, nullptr) << c.mutant;
  const Property* property = find_property(c.property);
  ASSERT_NE(property, nullptr);
  const Subject subject{std::string(impl->id()), impl, nullptr, false, nullptr};  // shrunk, as a real failure is
  RunConfig config = test_run_config();
  config.shrink = true;
  config.model_shapes = ModelShapeSet::short_calls;  // a prefill past 16384 rows is one of them
  const auto found = run_property(*property, subject, config);
  ASSERT_EQ(found.status, Status::failed) << c.mutant << ": " << found.message;
  const std::string shown = found.message + "\n" + found.counterexample;
  EXPECT_TRUE(std::regex_search(shown, std::regex(c.path))) << c.path << " not in\n" << shown;

  config.reproduce = found.reproduce;
  const auto replayed = run_property(*property, subject, config);
  EXPECT_EQ(replayed.status, Status::failed) << replayed.message;
  EXPECT_EQ(replayed.message, found.message);
  EXPECT_EQ(replayed.counterexample, found.counterexample);
}

INSTANTIATE_TEST_SUITE_P(KernelPaths, PathMutant, ::testing::ValuesIn(kPaths),
                         [](const auto& info) {
                           std::string name = std::string(info.param.mutant).substr(7);
                           return name;
                         });

}  // namespace
}  // namespace ropecheck
