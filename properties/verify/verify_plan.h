// What `ropecheck verify` will run: the selected subjects, each with the selected properties of
// its kind (a RoPE property on a sinusoidal table is a meaningless pair, so it is never planned),
// validated up front so that bad options cost nothing and exit 2 before any property runs.
#pragma once

#include <vector>

#include "properties/verify/verify.h"
#include "plugins/host/plugin_subjects.h"
#include "properties/property.h"

namespace ropecheck {

struct VerifyJob {
  Subject subject;
  std::vector<const Property*> properties;  // catalogue order
};

struct VerifyPlan {
  RunConfig config;
  bool mutants = false;  // --mutants: mutants are judged by the kill matrix
  // Real subjects first, then mutants, registry order. A subject with no applicable property is
  // left out, except a mutant judged by the kill matrix (it then survives).
  std::vector<VerifyJob> jobs;
  LoadedPlugins plugins;  // --plugin: owns the plugin/<name> subjects' implementations
  std::size_t progress_every = 1;  // a progress line for every this many subjects (and the last)
};

// Throws InvalidInput naming the problem: cases <= 0, an unknown implementation or property id
// (listing the valid ones), a reproduce string that does not parse or names a pair outside the
// selection, or a selection in which no property applies to any subject.
VerifyPlan plan_verify(const VerifyOptions& options);

// True when the subject's failures are expected: a mutant in a --mutants run.
bool judged_as_mutant(const VerifyPlan& plan, const Subject& subject);

}  // namespace ropecheck
