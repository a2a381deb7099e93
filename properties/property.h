// The property catalogue's types: what a property is, what it is run on, and what it reports.
// `ropecheck verify` and the gtest files both run properties through run_suite() / run_property(),
// so a test and the CLI see exactly the same checks.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "impls/sinusoidal/absolute_encoding.h"
#include "impls/attention/attention_impl.h"
#include "impls/fused/rope_cache_impl.h"
#include "impls/fused/rope_form_impl.h"
#include "impls/rope_impl.h"

namespace ropecheck {

// benchdnn's statuses: a property that cannot apply to a subject is skipped with the reason,
// never silently passed; one whose every case was vacuous (every position 0, rotary_dim 0, an
// all-zero input: nothing a bug could change) is mistrusted, not passed.
// hang: a call did not return within its watchdog (a plugin's): reported once, unshrunk, and a
// failure like `failed` (failing() is true for both).
enum class Status { passed, failed, skipped, mistrusted, hang };

// Which real model shapes a RoPE property runs after its random cases (core/model_shapes.h): all
// of them; the short calls (up to 512 tokens: every shape but the two 4096-token prefills, which
// hold 60% of the elements); none (a run of the plumbing, not of the kernels).
enum class ModelShapeSet { all, short_calls, none };
std::string_view to_string(ModelShapeSet set);
// "all", "short" or "none"; InvalidInput otherwise, naming `option`.
ModelShapeSet parse_model_shape_set(std::string_view text, std::string_view option);
std::string_view to_string(Status status);
constexpr bool failing(Status status) { return status == Status::failed || status == Status::hang; }

// What a property runs on: a RoPE implementation, a sinusoidal table, an attention, a fused call
// that writes the paged KV cache, or RoPE in an engine's call form (QK-norm included).
struct Subject {
  std::string id;
  const RopeImpl* rope = nullptr;
  const SinusoidalImpl* sinusoidal = nullptr;
  bool mutant = false;
  const AttentionImpl* attention = nullptr;
  const RopeCacheImpl* rope_cache = nullptr;
  const RopeFormImpl* rope_form = nullptr;
};

// verify's thread limit by default, whatever the machine: a split into 3, 13 or 32 chunks finds
// on 2 cores the same bugs as on the 32-core server a kernel ships to (the threads need not run at
// once to be wrong). Benchmarks use the real CPU counts.
inline constexpr int kDefaultVerifyThreads = 32;

struct RunConfig {
  std::uint64_t seed = 1;  // fixed by default: a CI verdict must replay
  int cases = 100;         // RapidCheck maxSuccess per (subject, property)
  // A RapidCheck reproduce string (from a failure line) replays that one shrunk case.
  std::string reproduce;
  // Arguments a printed replay command needs besides the pair, seed and reproduce string (the
  // --plugin that makes a plugin/<name> subject exist); appended to every __REPRO command.
  std::vector<std::string> replay_args;
  // Most threads a call may be given (RopeImpl::apply's `threads`, an attention team, at most
  // each subject's max_threads), drawn by call_threads() (guarded_apply.h). verify's --threads.
  int threads = 1;
  // After the random cases, one case at each real model shape of this set (model_shape_cases.h).
  ModelShapeSet model_shapes = ModelShapeSet::all;
  // Shrink a failure to a smallest counterexample. Off for mutants (run_property): their failure
  // is expected, the kill matrix needs only that they fail, and shrinking one took up to 40 s.
  bool shrink = true;
  // The id of the property being run, set by run_property(): a property's code never writes its
  // own id again (check_property() and skipped_result() read it here).
  std::string property_id;
};

struct PropertyResult {
  std::string subject;
  std::string property;
  Status status = Status::passed;
  int cases = 0;                 // cases that passed before the verdict
  double worst_ratio = 0.0;      // max over cases of observed error / bound (<= 1 passes)
  double worst_error = 0.0;      // the observed error at that case, in the property's units
  double bound = 0.0;            // the bound at that case, same units
  std::string units;             // e.g. "eps32*|pair|"
  std::string message;           // why it failed or was skipped
  std::string counterexample;    // the shrunk failing case, printed
  std::string reproduce;         // RapidCheck reproduce string for RunConfig::reproduce
  double seconds = 0.0;
};

// A SKIPPED result with its reason; the second form inside a property (config.property_id).
PropertyResult skipped_result(const Subject& subject, std::string_view property,
                              std::string reason);
PropertyResult skipped_result(const Subject& subject, const RunConfig& config, std::string reason);

enum class SubjectKind { rope, sinusoidal, attention, rope_cache, rope_form };
std::string_view to_string(SubjectKind kind);

struct Property {
  std::string_view id;           // snake_case, the same in --property, tests and reports
  std::string_view description;  // one line: what it states, which seed it comes from
  SubjectKind kind;
  PropertyResult (*run)(const Subject& subject, const RunConfig& config);
};

// Every property, RoPE first then sinusoidal.
std::span<const Property> property_catalogue();
const Property* find_property(std::string_view id);

// Whether the property is about this kind of subject (RoPE properties on RoPE implementations...).
bool applies_to(const Property& property, const Subject& subject);

// Subjects from the registry: real implementations, or mutants.
std::vector<Subject> registry_subjects(bool mutants);

// Runs one property on one subject: skipped when the kinds differ or the subject is unavailable.
PropertyResult run_property(const Property& property, const Subject& subject,
                            const RunConfig& config);

}  // namespace ropecheck
