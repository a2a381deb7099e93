// counted.json (schema ropecheck.counted/1): what `ropecheck count` and each side of a counted gate
// (`gate --measure counted`) write, and what `compare`, the report and `history add` read. Per
// case: the events Valgrind's callgrind collected over N calls of the case (gate/counted_runner.h
// runs it), and the cycles they are estimated to cost (CycleModel). Counts, not times: the same
// build counts the same on any machine and in any process (gate/README.md, "Counted").
//   const CountedRun run = read_counted_run("reports/out/count");  // counted.json or its folder
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ropecheck {

inline constexpr const char* kCountedSchema = "ropecheck.counted/1";
inline constexpr const char* kCountedFileName = "counted.json";

// callgrind's events with --cache-sim=yes, summed over the collected calls.
struct EventCounts {
  std::uint64_t ir = 0;                       // instructions executed
  std::uint64_t dr = 0, dw = 0;               // data reads and writes
  std::uint64_t i1mr = 0, d1mr = 0, d1mw = 0;  // first-level misses: instruction, data read, write
  std::uint64_t ilmr = 0, dlmr = 0, dlmw = 0;  // last-level misses: the same three
  std::uint64_t l1_misses() const { return i1mr + d1mr + d1mw; }
  std::uint64_t ll_misses() const { return ilmr + dlmr + dlmw; }
  bool operator==(const EventCounts&) const = default;
};

// The estimated cycles of a count: instructions, plus a cost per first-level miss that the last
// level serves, plus a cost per last-level miss (memory):
//   cycles = Ir + l1_miss_cycles * (L1 misses - LL misses) + ll_miss_cycles * LL misses.
// The two costs are calibrated against wall time (gate/cycle_model.h says where and how well).
struct CycleModel {
  double l1_miss_cycles = 0;
  double ll_miss_cycles = 0;
  double estimate(const EventCounts& counts) const;
  std::string formula() const;  // e.g. "Ir + 8 x (L1 misses - LL misses) + 60 x LL misses"
};

struct CountedCase {
  std::string name;  // the bench case, e.g. "kernel/avx2/llama7b_decode_at4095/interleaved/real_time/threads:1"
  int calls = 0;     // collected calls (after one that warmed the simulated caches)
  EventCounts totals;
  double estimated_cycles = 0;  // per call, by the run's model
  // Per call.
  double instructions() const { return static_cast<double>(totals.ir) / calls; }
  double l1_misses() const { return static_cast<double>(totals.l1_misses()) / calls; }
  double ll_misses() const { return static_cast<double>(totals.ll_misses()) / calls; }
};

struct CountedRun {
  std::string started;           // UTC, ISO 8601
  std::string cpu_model;         // the host's; the counts do not depend on it
  std::string valgrind;          // e.g. "valgrind-3.19.0"
  std::string simulated_caches;  // callgrind's --I1/--D1/--LL, e.g. "I1 32 KiB 8-way, ..."
  std::string counted_isa;       // the kernel level the counts ran at, e.g. "avx2"
  std::string isa_note;          // why, when it is below this CPU's, e.g. "Valgrind runs no AVX-512"
  CycleModel model;
  std::string ropecheck_commit;  // of the executable counted
  std::vector<CountedCase> cases;
  const CountedCase* find(const std::string& name) const;
};

nlohmann::json counted_run_json(const CountedRun& run);

// `path`: a counted.json, or a directory holding one. Throws InvalidInput naming the file and the
// problem (missing, not JSON, another schema, a field missing or of the wrong type, a case with
// no calls or no instructions, a case twice).
CountedRun read_counted_run(const std::filesystem::path& path);

// Whether `path` is a counted.json or a directory holding one.
bool is_counted_run(const std::filesystem::path& path);

}  // namespace ropecheck
