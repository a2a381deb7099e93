// verify's worker processes (properties/verify/verify_processes.h): the same results in any
// number of processes, in plan order; a worker that dies fails its subject and the rest go on; a
// plugin subject runs in the parent; bad input stops the run.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <limits>
#include <string>
#include <vector>

#include "core/errors.h"
#include "impls/registry.h"
#include "plugins/host/plugin_host.h"
#include "properties/property.h"
#include "properties/verify/verify_plan.h"
#include "properties/verify/verify_run.h"
#include "tests/support/test_process.h"

namespace ropecheck {
namespace {

// The process the test runs in: a property that must not run in a worker can tell.
const pid_t kTestProcess = getpid();
constexpr double kInfinity = std::numeric_limits<double>::infinity();

PropertyResult passes(const Subject& subject, const RunConfig&) {
  PropertyResult r;
  r.subject = subject.id;
  r.property = "passes";
  r.cases = static_cast<int>(getpid() == kTestProcess);  // 1 where it ran in this process
  r.worst_ratio = kInfinity;  // not JSON's null on its way back: bits
  return r;
}
PropertyResult dies_in_a_worker(const Subject& subject, const RunConfig& config) {
  if (getpid() != kTestProcess) kill(getpid(), SIGKILL);
  return passes(subject, config);
}
PropertyResult bad_input(const Subject&, const RunConfig&) { throw InvalidInput("a bad reproduce string"); }

const Property kPasses{"passes", "passes", SubjectKind::rope, &passes};
const Property kDies{"dies", "kills its process in a worker", SubjectKind::rope, &dies_in_a_worker};
const Property kBadInput{"bad_input", "bad input", SubjectKind::rope, &bad_input};

VerifyPlan plan_of(const std::vector<std::vector<const Property*>>& jobs) {
  VerifyPlan plan;
  const auto subjects = registry_subjects(false);
  for (std::size_t i = 0; i < jobs.size(); ++i) plan.jobs.push_back({subjects.at(i), jobs[i]});
  return plan;
}

TEST(VerifyProcesses, AnyNumberOfProcessesGivesTheSameResultsInPlanOrder) {
  VerifyOptions options;
  options.impls = {"rotate_half/scalar", "kernel_fp16/scalar", "mutant/sin_sign_flipped",
                   "sinusoidal/formula", "attention_naive/scalar"};
  // One property of each kind, and the mutant's failing one: enough to carry every field.
  options.properties = {"oracle_agreement", "inverse", "sinusoidal_shift_is_rotation", "attention_causal"};
  options.cases = 10;
  // The fan-out, not the kernels: no model shapes (at all of them, 22 s of the sanitizer leg).
  options.model_shapes = ModelShapeSet::none;
  const VerifyPlan plan = plan_verify(options);
  const VerifyRun one = execute_plan(plan, 1);
  const VerifyRun three = execute_plan(plan, 3);
  ASSERT_EQ(one.subjects.size(), three.subjects.size());
  std::size_t failed = 0;
  for (std::size_t s = 0; s < one.subjects.size(); ++s) {
    EXPECT_EQ(one.subjects[s].subject.id, three.subjects[s].subject.id);
    ASSERT_EQ(one.subjects[s].results.size(), three.subjects[s].results.size());
    for (std::size_t p = 0; p < one.subjects[s].results.size(); ++p) {
      const auto& a = one.subjects[s].results[p];
      const auto& b = three.subjects[s].results[p];
      SCOPED_TRACE(a.subject + " " + a.property);
      EXPECT_EQ(a.property, b.property);
      EXPECT_EQ(a.status, b.status);
      EXPECT_EQ(a.cases, b.cases);
      EXPECT_EQ(a.worst_ratio, b.worst_ratio);
      EXPECT_EQ(a.worst_error, b.worst_error);
      EXPECT_EQ(a.message, b.message);
      EXPECT_EQ(a.counterexample, b.counterexample);
      EXPECT_EQ(a.reproduce, b.reproduce);
      failed += a.status == Status::failed;
    }
  }
  EXPECT_GT(failed, 0u);  // the mutant's failures (message, counterexample) made the trip too
}

TEST(VerifyProcesses, AWorkerThatDiesFailsItsSubjectAndTheRestGoOn) {
  const VerifyPlan plan = plan_of({{&kPasses}, {&kDies, &kPasses}, {&kPasses}, {&kPasses}});
  const VerifyRun run = execute_plan(plan, 2);
  ASSERT_EQ(run.subjects.size(), 4u);
  for (const std::size_t s : {0u, 2u, 3u}) {
    ASSERT_EQ(run.subjects[s].results.size(), 1u);
    EXPECT_EQ(run.subjects[s].results[0].status, Status::passed) << s;
    EXPECT_EQ(run.subjects[s].results[0].worst_ratio, kInfinity);
  }
  const auto& died = run.subjects[1].results;
  ASSERT_EQ(died.size(), 2u);
  for (const auto& r : died) {
    EXPECT_EQ(r.status, Status::failed);
    EXPECT_NE(r.message.find("died (killed by SIGKILL)"), std::string::npos) << r.message;
  }
  EXPECT_EQ(died[0].property, "dies");
  EXPECT_EQ(died[1].property, "passes");
}

TEST(VerifyProcesses, EveryWorkerDeadLeavesTheRestToThisProcess) {
  const VerifyRun run = execute_plan(plan_of({{&kDies}, {&kDies}, {&kPasses}, {&kPasses}}), 2);
  EXPECT_EQ(run.subjects[0].results[0].status, Status::failed);
  EXPECT_EQ(run.subjects[1].results[0].status, Status::failed);
  for (const std::size_t s : {2u, 3u}) {
    EXPECT_EQ(run.subjects[s].results[0].status, Status::passed);
    EXPECT_EQ(run.subjects[s].results[0].cases, 1) << "should have run in this process";
  }
}

TEST(VerifyProcesses, APluginSubjectRunsInThisProcessWhichOwnsItsWorker) {
  const auto plugin = load_plugin(test::built_plugin("good_rope"));
  VerifyPlan plan = plan_of({{&kPasses}, {&kPasses}});
  plan.jobs.push_back({Subject{"plugin/good_rope", plugin.get()}, {&kPasses}});
  const VerifyRun run = execute_plan(plan, 2);
  EXPECT_EQ(run.subjects[0].results[0].cases, 0) << "a built-in subject should run in a worker";
  EXPECT_EQ(run.subjects[2].results[0].cases, 1) << "a plugin subject should run in this process";
}

TEST(VerifyProcesses, BadInputInAWorkerStopsTheRun) {
  const VerifyPlan plan = plan_of({{&kPasses}, {&kBadInput}, {&kPasses}});
  EXPECT_THROW(execute_plan(plan, 2), InvalidInput);
}

}  // namespace
}  // namespace ropecheck
