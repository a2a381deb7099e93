// One counted process under callgrind (counted_runner.h).
#include "gate/counted_runner.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <cstdlib>
#include <initializer_list>

#include "core/errors.h"
#include "core/executables.h"
#include "gate/callgrind_totals.h"
#include "gate/child_process.h"

namespace ropecheck {
namespace {

constexpr int kLineBytes = 64;
constexpr int kL1Bytes = 32 << 10, kL1Ways = 8;       // the instruction cache
constexpr int kD1Bytes = 48 << 10, kD1Ways = 12;      // the data cache
constexpr int kLastLevelWays = 16;

std::string cache_option(const char* name, std::uint64_t bytes, int ways) {
  return fmt::format("--{}={},{},{}", name, bytes, ways, kLineBytes);
}

// A fresh folder of a fixed-length name under the temporary directory, removed with this object.
class RunFolder {
 public:
  RunFolder() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ropecheck-counted-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw InvalidInput(fmt::format("counting: cannot create a folder like {}", pattern));
    }
    path_ = pattern;
  }
  ~RunFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  RunFolder(const RunFolder&) = delete;
  RunFolder& operator=(const RunFolder&) = delete;
  const std::filesystem::path& path() const { return path_; }
  // Copies the named files that exist into `dir` (a copy: the two may be on different file systems).
  void move_into(const std::filesystem::path& dir, std::initializer_list<const char*> names) const {
    for (const char* name : names) {
      std::error_code missing;
      std::filesystem::copy_file(path_ / name, dir / name, std::filesystem::copy_options::overwrite_existing, missing);
    }
  }

 private:
  std::filesystem::path path_;
};

}  // namespace

std::vector<std::string> callgrind_arguments(const std::filesystem::path& out_file) {
  return {"--tool=callgrind", "--cache-sim=yes",
          cache_option("I1", kL1Bytes, kL1Ways), cache_option("D1", kD1Bytes, kD1Ways),
          cache_option("LL", kSimulatedLastLevelBytes, kLastLevelWays),
          "--instr-atstart=no", "--collect-atstart=no",
          // A side may be a script that execs ropecheck (the gate's calibration wraps one so).
          "--trace-children=yes",
          "--callgrind-out-file=" + out_file.string()};
}

std::string simulated_caches_text() {
  return fmt::format("I1 {} KiB {}-way, D1 {} KiB {}-way, LL {} MiB {}-way, {} B lines", kL1Bytes >> 10,
                     kL1Ways, kD1Bytes >> 10, kD1Ways, kSimulatedLastLevelBytes >> 20, kLastLevelWays, kLineBytes);
}

std::optional<std::filesystem::path> find_valgrind(std::string& why) {
  if (const char* given = std::getenv("ROPECHECK_VALGRIND"); given != nullptr && *given != '\0') {
    if (is_executable_file(given)) return std::filesystem::path(given);
    why = fmt::format("ROPECHECK_VALGRIND={} is not an executable", given);
    return std::nullopt;
  }
  if (auto found = find_on_path("valgrind")) return found;
  why = "no valgrind on PATH";
  return std::nullopt;
}

std::filesystem::path require_valgrind(std::string_view what) {
  std::string why;
  if (auto found = find_valgrind(why)) return *found;
  throw InvalidInput(fmt::format("{} counts under Valgrind's callgrind, and {}: install the Debian "
                                 "package valgrind (scripts/install-deps.sh does)", what, why));
}

CountedCase count_case(const std::filesystem::path& valgrind, const std::vector<std::string>& bench_command,
                       const std::string& filter, const std::string& case_name, int calls,
                       const CycleModel& model, const std::filesystem::path& dir, std::string* creator) {
  std::filesystem::create_directories(dir);
  const auto out_file = dir / "callgrind.out";
  const auto log = dir / "count.log";
  std::filesystem::remove(out_file);
  std::filesystem::remove(log);
  std::vector<std::string> argv{valgrind.string()};
  // callgrind.out by its name in the folder: both sides' command lines as long (gate_rounds.h).
  for (auto& a : callgrind_arguments("callgrind.out")) argv.push_back(std::move(a));
  argv.insert(argv.end(), bench_command.begin(), bench_command.end());
  argv.insert(argv.end(), {"--filter", filter, "--counted-calls", std::to_string(calls), "--threads", "1",
                           "--out", "."});
  // The process runs in a fresh folder whose path has the same length in every gate and on either
  // side: the bench turns its folder into paths, whose lengths move its later heap allocations,
  // and with them which simulated cache sets a buffer's lines fall in. Side folders of different
  // lengths (counted/base, counted/current) moved decode's L1 misses by 0.05% between two
  // processes of one build.
  const RunFolder folder;
  const int code = run_child(argv, log, folder.path());
  folder.move_into(dir, {"callgrind.out", "bench.json"});
  if (code != 0) {
    throw InvalidInput(fmt::format("counting {}: the counted process exited with {} (its output: {})",
                                   case_name, code, log.string()));
  }
  const CallgrindTotals totals = read_callgrind_totals(out_file);
  if (totals.counts.ir == 0) {
    throw InvalidInput(fmt::format("counting {}: callgrind collected nothing: the side's bench has no "
                                   "counted mode around this case (its output: {})", case_name, log.string()));
  }
  if (creator != nullptr) *creator = totals.creator;
  CountedCase counted;
  counted.name = case_name;
  counted.calls = calls;
  counted.totals = totals.counts;
  counted.estimated_cycles = model.estimate(totals.counts) / calls;
  return counted;
}

}  // namespace ropecheck
