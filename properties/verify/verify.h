// `ropecheck verify`: the property suite on the selected subjects -> a table, verify.json, and
// with --mutants the kill matrix. Bad input throws InvalidInput (core/errors.h) before anything runs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "core/result_files.h"
#include "plugins/host/plugin_host.h"
#include "properties/property.h"

namespace ropecheck {

// verify's thread limit when --threads is 0, and what --plugin-threads gives an ABI 2 plugin by
// default: kDefaultVerifyThreads (property.h), or the usable CPUs where there are more, at most
// kMaxCallThreads.
int default_verify_threads();

struct VerifyOptions {
  std::vector<std::string> impls;       // registry ids, real or mutant; empty: every real one
  std::vector<std::string> properties;  // property ids; empty: the whole catalogue
  int cases = 100;                      // RapidCheck cases per (subject, property), > 0
  int jobs = 0;                         // worker processes, >= 0; 0: one per usable CPU
  std::uint64_t seed = 1;               // fixed by default: a CI verdict must replay
  bool mutants = false;                 // add every mutant and judge mutants by the kill matrix
  // The real model shapes every RoPE property runs after its random cases (RunConfig).
  ModelShapeSet model_shapes = ModelShapeSet::all;
  // Most threads a call is given (RunConfig::threads); 0: default_verify_threads().
  int threads = 0;
  std::string reproduce;                // a RapidCheck reproduce string from a __REPRO line
  std::string isa;                      // scalar|avx2|avx512|neon|sve: as on a CPU with nothing above it
  std::filesystem::path out_dir = kDefaultOutDir;
  std::filesystem::path junit_out;  // --junit: also write JUnit XML here (verify_junit.h)
  // --plugin: shared libraries speaking plugins/include/ropecheck/plugin.h, verified as `plugin/<name>`
  // (without --impl, only they are verified); each runs in a child that is killed after
  // plugin_options.timeout_seconds without an answer.
  std::vector<std::filesystem::path> plugins;
  PluginOptions plugin_options;
  // Recorded in verify.json; empty: the equivalent `ropecheck verify ...` command is recorded.
  std::vector<std::string> command_line;
  // Progress lines on stderr as subjects start: 0, one per subject; N, about N in all (the main
  // job keeps its console to one screen with 5).
  int progress_lines = 0;
};

// Runs the selected properties on the selected subjects, prints the result table (and with
// `mutants` the kill matrix) to `out`, writes out_dir/verify.json. Returns kExitOk or
// kExitFailed; throws InvalidInput for bad options (unknown ids, cases <= 0, bad reproduce
// string, unwritable out_dir) before anything runs.
int run_verify(const VerifyOptions& options, std::ostream& out);

}  // namespace ropecheck
