// Counting one bench case under Valgrind's callgrind (gate/README.md, "Counted"): a fresh process
//   valgrind --tool=callgrind --cache-sim=yes <the simulated caches> --instr-atstart=no
//            --collect-atstart=no --callgrind-out-file=callgrind.out
//            <side> bench --filter '^case$' --counted-calls N --threads 1 --out .
// in the case's own folder, then callgrind.out's totals over the N collected calls
// (bench/counted_region.h starts and stops collection around them).
//
// The simulated caches are fixed rather than read from the host: callgrind's own detection read
// a 512 MiB 2-way last level on a Zen 5 guest, and fixed caches make the counts the same on every
// machine a CI job lands on, so a history of counts is one line across machines. They are a
// recent core's (Zen 5; Intel since Sunny Cove has the same L1s): a 32 KiB 8-way L1 instruction
// cache, a 48 KiB 12-way L1 data cache, a 32 MiB 16-way last level, 64 B lines. With a 32 KiB
// data cache, decode's 32 KiB of fp32 q and k filled it exactly, and which lines the kernel's
// other data evicted (so its misses) moved by 0.67% of its cycles with the environment's length
// (gate/README.md, "Counted"). A case whose working set exceeds the last level is not counted but
// timed (gated_cases.h): callgrind models no memory bandwidth and no prefetcher.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/format/counted_json.h"

namespace ropecheck {

inline constexpr std::uint64_t kSimulatedLastLevelBytes = std::uint64_t{32} << 20;

// callgrind's options for a counted process writing `out_file`.
std::vector<std::string> callgrind_arguments(const std::filesystem::path& out_file);

// "I1 32 KiB 8-way, D1 32 KiB 8-way, LL 32 MiB 16-way, 64 B lines".
std::string simulated_caches_text();

// The valgrind executable: $ROPECHECK_VALGRIND, else `valgrind` on PATH. None, with the reason
// in `why`, when there is none.
std::optional<std::filesystem::path> find_valgrind(std::string& why);

// find_valgrind, or InvalidInput with one line naming the package, for `what` ("gate --measure
// counted", "count").
std::filesystem::path require_valgrind(std::string_view what);

// Runs the counted process of `case_name` (its exact filter: `filter`) for a side whose command
// ends in "bench", in `dir` (created; callgrind.out and count.log there), and returns its counts
// with the estimated cycles per call by `model`; `creator` gets callgrind's version. Throws
// InvalidInput when the process fails (its log named) or collected nothing.
CountedCase count_case(const std::filesystem::path& valgrind, const std::vector<std::string>& bench_command,
                       const std::string& filter, const std::string& case_name, int calls,
                       const CycleModel& model, const std::filesystem::path& dir, std::string* creator = nullptr);

}  // namespace ropecheck
