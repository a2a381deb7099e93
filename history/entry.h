// One history entry: one finished run on one machine at one commit, with what is needed to trust
// and group it (schema ropecheck.history/2, schemas/history.schema.json; /1 files, all timed,
// are still read). A run is timed (a `ropecheck bench` process: samples of its repetitions) or
// counted (counted.json: callgrind's events per call, whose "machine" is the simulated one). A
// history is a directory of these files, one per (machine, commit, run):
// H/<machine id>/<commit>-<run date>-<digest>.json, readable with any JSON tool.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/format/counted_json.h"

namespace ropecheck::history {

inline constexpr const char* kEntrySchema = "ropecheck.history/2";
inline constexpr const char* kEntrySchemaV1 = "ropecheck.history/1";  // read: a timed entry

struct EntryCommit {
  std::string id;         // full git object name (or the id given with --commit-date)
  std::int64_t time = 0;  // committer date, seconds since the epoch (file: UTC ISO 8601)
  std::string branch;     // "" unknown
  std::string subject;    // "" unknown
  std::int64_t ancestors = 0;  // commits reachable from it, itself included; 0 unknown (git_commit.h)
};

// Where the run came from: the bench's own date and host, and a digest of its cases, so that one
// run recorded twice is recognised whatever commit it was given.
struct EntryRun {
  std::int64_t time = 0;  // Google Benchmark's context date
  std::string host_name, digest;
  std::int64_t recorded = 0;  // when `history add` wrote the entry
};

// The hardware a run measured: what decides which runs may share a line on a plot. id names the
// line and the entry's folder; fingerprint hashes the facts below it, so that two machines never
// share an id (machine_id.h).
struct EntryMachine {
  std::string id, fingerprint;
  std::string cpu_model;
  int logical_cpus = 0;
  double mhz_per_cpu = 0;  // as Google Benchmark read it: recorded, not part of the fingerprint
  std::vector<std::string> cpu_flags, isa_levels;  // flags of interest present; levels runnable
  std::string dispatched_isa, openblas_core;
};

// The build and libraries that ran: a step on a plot where one of these changed is the
// toolchain's as much as the code's.
struct EntryBuild {
  std::string ropecheck_version, ropecheck_commit;  // the binary's own (configure-time) commit
  std::string compiler, cxx_flags, build_type;
  std::string openblas, benchmark_build_type;  // OpenBLAS's config string; Google Benchmark's build
  int openblas_threads = 0, plugin_threads = 0;  // 0: not recorded
};

// What a counted run was counted on and estimated with: the identity of its line (machine_id.h),
// since the counts depend on these and not on the host that ran Valgrind.
struct EntryCounted {
  std::string counted_isa, isa_note, simulated_caches, valgrind;
  CycleModel model;
};

// One case of a counted run: its events summed over `calls`, and per call the values plotted.
struct EntryCountedCase {
  int calls = 0;
  EventCounts totals;
  double estimated_cycles = 0, instructions = 0, l1_misses = 0, ll_misses = 0;  // per call
};

// One case's samples, one per repetition of the run, in repetition order (timed), or its counts
// (counted: the timed series are then empty).
struct EntryCase {
  std::string name;                    // bench.json's run_name (bench/format/case_name.h)
  std::string rate_unit;               // "GB/s", "GFLOP/s", or "" (no rate counter)
  std::vector<double> rate;            // in rate_unit; empty when rate_unit is ""
  std::vector<double> probe_rate;      // the same-run probe's rate, same unit; may be empty
  std::vector<double> limit_fraction;  // probe time / case time; empty: no same-run limit
  std::vector<double> real_time_ns;    // per call
  std::optional<EntryCountedCase> counted;

  std::size_t repetitions() const { return real_time_ns.size(); }
};

struct Entry {
  EntryCommit commit;
  EntryRun run;
  EntryMachine machine;
  EntryBuild build;
  std::optional<EntryCounted> counted;  // set: a counted run, every case counted
  std::vector<EntryCase> cases;         // in the run's file order

  bool is_counted() const { return counted.has_value(); }
};

nlohmann::ordered_json entry_to_json(const Entry& entry);

// Reads and checks every field (the schema's rules: types, finite positive samples of equal
// count, ids fit for file names). Throws InvalidInput naming `file` and what is wrong.
Entry entry_from_json(const nlohmann::ordered_json& json, const std::filesystem::path& file);

// Reads `file` as an entry; InvalidInput naming it when it cannot be read, is not JSON (a
// truncated file), is not a ropecheck.history/2 or /1 entry (a foreign file), or is malformed.
Entry read_entry(const std::filesystem::path& file);

// The first 12 characters of a commit id: how pages and file names show it.
std::string short_commit(const std::string& id);

// Whether `text` is fit to be an id in a file name: 1..100 of [A-Za-z0-9._-], not starting with '.'.
bool is_file_name_id(const std::string& text);

}  // namespace ropecheck::history
