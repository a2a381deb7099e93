// The gate's measurements: one round = the base and the current side each run once as a fresh
// `bench` process over the gated suite, back to back, in a seeded random order; each process is
// summarised as one value per case (the median of its few repetitions). Statistics happen later,
// on these per-process values only (gate_rule.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace ropecheck {

// What a per-process value is.
enum class GateMeasure {
  time,   // the median real time per call
  limit,  // the median of (case time / same-run probe time), i.e. 1 / limit_fraction
};
std::string_view to_string(GateMeasure measure);  // "time", "limit"

// One side: the command up to and including "bench" (e.g. {"old/ropecheck", "bench"}, or this
// binary with "bench", "--plugin", "old.so"). Both sides' commands must have the same length in
// bytes: the size of a process's command line moves where its stack and heap allocations land,
// and on the machine of bench/README.md a 3-byte longer --out path made one case's same-run probe
// 27% faster in every round of an A/A gate. gate.cc runs both through same-length links.
struct GateSide {
  std::string label;  // "base" or "current"
  std::vector<std::string> bench_command;
};

struct BenchSettings {
  std::string filter;
  int repetitions = 3;
  double min_time = 0.05;
};

// One process's per-case medians, by case key (case_key()).
struct ProcessValues {
  std::map<std::string, double> time_ns;
  std::map<std::string, double> limit_time;  // cases with a limit_fraction only
};

struct Round {
  bool base_first = true;
  ProcessValues base, current;
  double seconds = 0;  // wall time of both processes
};

// The key a case is paired by: its name, with a plugin's own name replaced by "*" (plugin/*/...)
// so that two versions of a plugin pair up even when they call themselves differently.
std::string case_key(const std::string& name);

// Runs `side` once: `bench --filter ... --repetitions ... --min-time ... --threads 1 --out dir`,
// output into dir/bench.log; reads dir/bench.json. Throws InvalidInput when the process fails (its
// exit status and log named) or writes no usable bench.json.
ProcessValues run_side(const GateSide& side, const BenchSettings& settings,
                       const std::filesystem::path& dir);

// The order of the rounds: blocks of two, one base-first and one current-first in a random order
// each, so that any K is balanced to within one round and an order effect cancels.
class RoundOrder {
 public:
  explicit RoundOrder(std::uint64_t seed) : engine_(seed) {}
  bool next_base_first();

 private:
  std::mt19937_64 engine_;
  bool pending_ = false, pending_value_ = false;
};

// Every available RoPE implementation id of a side (`... list --json`, run with the side's
// command minus "bench"); output into `log`. Throws InvalidInput when that fails.
std::vector<std::string> available_implementations(const GateSide& side,
                                                   const std::filesystem::path& dir);

}  // namespace ropecheck
