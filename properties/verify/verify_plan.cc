// plan_verify(): --impl / --property / --mutants / --reproduce resolved against the registry and
// the property catalogue.
#include "properties/verify/verify_plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>
#include <utility>

#include "properties/harness/rapidcheck_bridge.h"
#include "core/errors.h"
#include "core/logging.h"
#include "core/machine_info.h"

namespace ropecheck {
namespace {

bool contains(const std::vector<std::string>& ids, std::string_view id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

std::vector<std::string> subject_ids(const std::vector<Subject>& subjects) {
  std::vector<std::string> ids;
  for (const auto& s : subjects) ids.push_back(s.id);
  return ids;
}

// Plugins are always verified (they were named on the command line); an --impl naming one is
// accepted, so that a printed __REPRO command works.
std::vector<Subject> plugin_subjects(const LoadedPlugins& plugins) {
  std::vector<Subject> subjects;
  for (const auto& p : plugins.rope) subjects.push_back({std::string(p->id()), p.get(), nullptr, false});
  for (const auto& p : plugins.attention) subjects.push_back({std::string(p->id()), nullptr, nullptr, false, p.get()});
  for (const auto& p : plugins.rope_cache) subjects.push_back({std::string(p->id()), nullptr, nullptr, false, nullptr, p.get()});
  for (const auto& p : plugins.rope_form) {
    subjects.push_back({std::string(p->id()), nullptr, nullptr, false, nullptr, nullptr, p.get()});
  }
  return subjects;
}

std::vector<Subject> select_subjects(const VerifyOptions& options, const LoadedPlugins& loaded) {
  const auto real = registry_subjects(false);
  const auto mutants = registry_subjects(true);
  const auto plugins = plugin_subjects(loaded);
  for (const auto& id : options.impls) {
    const auto known = [&](const Subject& s) { return s.id == id; };
    if (std::none_of(real.begin(), real.end(), known) &&
        std::none_of(mutants.begin(), mutants.end(), known) &&
        std::none_of(plugins.begin(), plugins.end(), known)) {
      throw InvalidInput(fmt::format(
          "unknown implementation '{}' (--impl); valid ids: {}; mutants: {}", id,
          fmt::join(subject_ids(real), ", "), fmt::join(subject_ids(mutants), ", ")));
    }
  }
  std::vector<Subject> selected;
  for (const auto& s : real) {
    // With --plugin and no --impl, the plugins alone are what the user asked about.
    const bool all_real = options.impls.empty() && plugins.empty();
    if (all_real || contains(options.impls, s.id)) selected.push_back(s);
  }
  selected.insert(selected.end(), plugins.begin(), plugins.end());
  for (const auto& s : mutants) {
    const bool named = contains(options.impls, s.id);
    if (!options.mutants && !named) continue;
    // --mutants leaves out a mutant of a kernel level this CPU cannot run (an aarch64 CPU without
    // SVE, or an ROPECHECK_ISA cap below the level: mutant/sve_tail_predicate_dropped): every
    // property would skip it, and a mutant nothing ran on reads as survived. Named by --impl, it
    // stays, and each property says why it skipped.
    if (!named && s.rope != nullptr) {
      if (const auto caps = s.rope->capabilities(); !caps.available) {
        progress_log().info("verify: {} left out of --mutants: not available on this CPU: {}", s.id,
                            caps.unavailable_reason);
        continue;
      }
    }
    selected.push_back(s);
  }
  return selected;
}

std::vector<const Property*> select_properties(const VerifyOptions& options) {
  std::vector<std::string> valid;
  for (const auto& p : property_catalogue()) valid.emplace_back(p.id);
  for (const auto& id : options.properties) {
    if (!contains(valid, id)) {
      throw InvalidInput(fmt::format("unknown property '{}' (--property); valid ids: {}", id,
                                     valid.empty() ? std::string("(none registered)")
                                                   : fmt::format("{}", fmt::join(valid, ", "))));
    }
  }
  std::vector<const Property*> selected;
  for (const auto& p : property_catalogue()) {
    if (options.properties.empty() || contains(options.properties, p.id)) selected.push_back(&p);
  }
  return selected;
}

// RapidCheck keys a reproduce string by test id, which check_property() makes
// "<subject id>/<property id>", and "...@<model shape>" for a model shape's case; property ids
// hold no '/', subject ids do (the shape is check_rope_property's to replay).
std::pair<std::string, std::string> split_test_id(const std::string& key) {
  const auto slash = key.rfind('/');
  if (slash == std::string::npos) return {key, ""};
  std::string property = key.substr(slash + 1);
  if (const auto at = property.find('@'); at != std::string::npos) property.resize(at);
  return {key.substr(0, slash), property};
}

// A replay runs only the pairs the reproduce string names: running the rest would turn a
// one-case replay into a full run, and a pair outside the selection would silently not replay.
void narrow_to_reproduce(VerifyPlan& plan) {
  const auto map = detail::reproduce_map(plan.config);  // throws InvalidInput if unparsable
  if (map.empty()) {
    throw InvalidInput(fmt::format("reproduce string '{}' names no test", plan.config.reproduce));
  }
  std::vector<std::pair<std::string, std::string>> wanted;
  for (const auto& [key, ignored] : map) {
    auto pair = split_test_id(key);
    const bool planned = std::any_of(plan.jobs.begin(), plan.jobs.end(), [&](const VerifyJob& j) {
      return j.subject.id == pair.first &&
             std::any_of(j.properties.begin(), j.properties.end(),
                         [&](const Property* p) { return p->id == pair.second; });
    });
    if (!planned) {
      throw InvalidInput(fmt::format(
          "the reproduce string replays '{}' (implementation '{}', property '{}'), which is not "
          "among the selected implementations and properties",
          key, pair.first, pair.second));
    }
    wanted.push_back(std::move(pair));
  }
  std::vector<VerifyJob> narrowed;
  for (auto& job : plan.jobs) {
    std::erase_if(job.properties, [&](const Property* p) {
      return std::find(wanted.begin(), wanted.end(),
                       std::pair<std::string, std::string>(job.subject.id, std::string(p->id))) ==
             wanted.end();
    });
    if (!job.properties.empty()) narrowed.push_back(std::move(job));
  }
  plan.jobs = std::move(narrowed);
}

}  // namespace

int default_verify_threads() {
  return std::min(std::max(kDefaultVerifyThreads, usable_cpus()), kMaxCallThreads);
}

VerifyPlan plan_verify(const VerifyOptions& options) {
  if (options.cases <= 0) {
    throw InvalidInput(
        fmt::format("--cases must be a positive number of cases, got {}", options.cases));
  }
  if (options.jobs < 0) {
    throw InvalidInput(fmt::format("--jobs must be 0 (one per CPU) or a number of processes, got {}",
                                   options.jobs));
  }
  if (options.threads < 0 || options.threads > kMaxCallThreads) {
    throw InvalidInput(fmt::format("--threads must be 1 to {} (0: the default, {}), got {}",
                                   kMaxCallThreads, kDefaultVerifyThreads, options.threads));
  }
  VerifyPlan plan;
  plan.config.threads = options.threads > 0 ? options.threads : default_verify_threads();
  plan.config.model_shapes = options.model_shapes;
  plan.config.seed = options.seed;
  plan.config.cases = options.cases;
  plan.config.reproduce = options.reproduce;
  plan.mutants = options.mutants;

  const auto properties = select_properties(options);
  plan.plugins = load_plugins(options.plugins, options.plugin_options);  // InvalidInput: exit 2
  plan.config.replay_args = plugin_arguments(options.plugins, options.plugin_options);
  for (auto& subject : select_subjects(options, plan.plugins)) {
    VerifyJob job{std::move(subject), {}};
    for (const Property* p : properties) {
      if (applies_to(*p, job.subject)) job.properties.push_back(p);
    }
    // A mutant no selected property applies to stays in the plan: it cannot be killed, and the
    // kill matrix must show it SURVIVED rather than drop it.
    if (!job.properties.empty() || judged_as_mutant(plan, job.subject)) {
      plan.jobs.push_back(std::move(job));
    }
  }
  const bool nothing_to_run = std::all_of(plan.jobs.begin(), plan.jobs.end(),
                                          [](const VerifyJob& j) { return j.properties.empty(); });
  if (nothing_to_run) {
    throw InvalidInput(
        "nothing to run: no selected property applies to any selected implementation "
        "(RoPE properties run on RoPE implementations, sinusoidal ones on sinusoidal tables)");
  }
  if (!options.reproduce.empty()) narrow_to_reproduce(plan);
  if (options.progress_lines > 0) {
    const auto lines = static_cast<std::size_t>(options.progress_lines);
    plan.progress_every = std::max<std::size_t>(1, (plan.jobs.size() + lines - 1) / lines);
  }
  return plan;
}

bool judged_as_mutant(const VerifyPlan& plan, const Subject& subject) {
  return plan.mutants && subject.mutant;
}

}  // namespace ropecheck
