// The gate's measurements. A warm-up round runs each side once over the whole gated suite (and
// finds which cases each side has); then each judged round runs, case by case in a shuffled
// order, a fresh `bench` process of that one case on each side, back to back, in a seeded random
// order. Each process is summarised as one value (the median of its few repetitions). Statistics
// happen later, on these per-process values only (gate_rule.h).
//
// Why a process per case and side: on a shared machine, the neighbours come and go in bursts of a
// second or more. With one process per side over the whole suite, a case's base and current
// values were about 5 s apart, and a burst that caught one side's 16-bit cases (run last) and not
// the other's moved their ratios by 20-40% (bench/README.md). A case's pair of processes now runs
// within about a second.
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
  double min_time = 0.02;
};

// Per-case medians by case key (case_key()), of one process or of a round's per-case processes.
struct ProcessValues {
  std::map<std::string, double> time_ns;
  std::map<std::string, double> limit_time;  // cases with a limit_fraction only
  void merge(const ProcessValues& other);
};

struct Round {
  bool base_first = true;  // for every case of the round
  ProcessValues base, current;
  double seconds = 0;  // wall time of all its processes
};

// A bench filter that matches exactly the case with this key (case_key()): the same text for
// both sides, so that their command lines keep the same length (a plugin's or a Python
// function's name is matched by [^/]+).
std::string exact_case_filter(const std::string& key);

// The key a case is paired by: its name, with a plugin's or a Python function's own name replaced
// by "*" (plugin/*/..., python/*/...) so that two versions pair up even when they are called
// differently.
std::string case_key(const std::string& name);

// Runs `side` once: `bench --filter ... --repetitions ... --min-time ... --threads 1 --out dir`,
// output into dir/bench.log; reads dir/bench.json. Throws InvalidInput when the process fails (its
// exit status and log named) or writes no usable bench.json.
ProcessValues run_side(const GateSide& side, const BenchSettings& settings,
                       const std::filesystem::path& dir);

// The order of the cases within a round: a seeded shuffle of 0..count-1.
std::vector<std::size_t> shuffled_case_order(std::size_t count, std::mt19937_64& engine);

// The order of the rounds: blocks of two, one base-first and one current-first in a random order
// each, so that any K is balanced to within one round and an order effect cancels.
class RoundOrder {
 public:
  explicit RoundOrder(std::uint64_t seed) : engine_(seed) {}
  bool next_base_first();
  std::mt19937_64& engine() { return engine_; }

 private:
  std::mt19937_64 engine_;
  bool pending_ = false, pending_value_ = false;
};

// Every available RoPE implementation id of a side (`... list --json`, run with the side's
// command minus "bench"); output into `log`. Throws InvalidInput when that fails.
std::vector<std::string> available_implementations(const GateSide& side,
                                                   const std::filesystem::path& dir);

}  // namespace ropecheck
