// count_suite() and list_countable_cases() (counted_suite.h).
#include "gate/counted_suite.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <ctime>
#include <exception>
#include <fstream>
#include <mutex>
#include <thread>

#include "core/errors.h"
#include "core/machine_info.h"
#include "core/result_files.h"
#include "gate/child_process.h"
#include "gate/counted_runner.h"

namespace ropecheck {
namespace {

// The commit the side's bench recorded in the counted process's bench.json ("" if none).
std::string recorded_commit(const std::filesystem::path& case_dir) {
  std::ifstream in(case_dir / "bench.json");
  try {
    const auto j = nlohmann::json::parse(in);
    return j.at("context").value("ropecheck_git_commit", "");
  } catch (const nlohmann::json::exception&) {
    return "";
  }
}

}  // namespace

std::string exact_name_filter(const std::string& name) {
  std::string escaped;
  for (const char c : name) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) escaped += '\\';
    escaped += c;
  }
  return "^" + escaped + "$";
}

std::vector<std::string> list_countable_cases(const std::filesystem::path& valgrind,
                                              const std::vector<std::string>& bench_command,
                                              const std::string& filter, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  const auto log = dir / "list.log";
  std::filesystem::remove(log);
  std::vector<std::string> argv{valgrind.string(), "--tool=none", "-q"};
  argv.insert(argv.end(), bench_command.begin(), bench_command.end());
  argv.insert(argv.end(), {"--filter", filter, "--benchmark=--benchmark_list_tests=true", "--threads", "1",
                           "--out", "."});
  const int code = run_child(argv, log, dir);
  if (code != 0) {
    throw InvalidInput(fmt::format("listing the cases to count: exited with {} (its output: {})", code, log.string()));
  }
  // Google Benchmark lists one name a line; the bench's other lines all hold spaces.
  std::vector<std::string> names;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.find_first_of(" \t") == std::string::npos && line.find('/') != std::string::npos) {
      names.push_back(line);
    }
  }
  return names;
}

CountedRun count_suite(const CountedSuite& suite, const std::filesystem::path& dir) {
  return count_suites({suite}, {dir}).front();
}

std::vector<CountedRun> count_suites(const std::vector<CountedSuite>& suites,
                                     const std::vector<std::filesystem::path>& dirs) {
  std::vector<CountedRun> runs(suites.size());
  std::vector<std::vector<std::string>> creators(suites.size());
  struct Task {
    std::size_t suite, index;
  };
  std::vector<Task> tasks;
  std::size_t most = 0;
  for (const auto& suite : suites) most = std::max(most, suite.cases.size());
  for (std::size_t i = 0; i < most; ++i) {
    for (std::size_t s = 0; s < suites.size(); ++s) {
      if (i < suites[s].cases.size()) tasks.push_back({s, i});
    }
  }
  for (std::size_t s = 0; s < suites.size(); ++s) {
    CountedRun& run = runs[s];
    run.started = fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)));
    run.cpu_model = this_machine().cpu_model;
    run.simulated_caches = simulated_caches_text();
    run.counted_isa = suites[s].counted_isa;
    run.isa_note = suites[s].isa_note;
    run.model = suites[s].model;
    run.cases.resize(suites[s].cases.size());
    creators[s].resize(suites[s].cases.size());
  }
  std::atomic<std::size_t> next{0};
  std::mutex failure_mutex;
  std::exception_ptr failure;
  const auto worker = [&] {
    for (std::size_t t = next++; t < tasks.size(); t = next++) {
      const auto [s, i] = tasks[t];
      const CountedSuite& suite = suites[s];
      try {
        runs[s].cases[i] = count_case(suite.valgrind, suite.bench_command, exact_name_filter(suite.cases[i]),
                                      suite.cases[i], suite.calls, suite.model,
                                      dirs[s] / fmt::format("case-{:02}", i + 1), &creators[s][i]);
      } catch (...) {
        const std::lock_guard lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next = tasks.size();
      }
    }
  };
  std::vector<std::thread> threads;
  const int jobs = suites.empty() ? 1 : std::max(1, suites.front().jobs);
  for (int j = 0; j < jobs; ++j) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
  for (std::size_t s = 0; s < suites.size(); ++s) {
    if (!creators[s].empty()) runs[s].valgrind = creators[s].front();
    if (!suites[s].cases.empty()) runs[s].ropecheck_commit = recorded_commit(dirs[s] / "case-01");
    write_text_file(counted_run_json(runs[s]).dump(2) + "\n", dirs[s] / kCountedFileName);
  }
  return runs;
}

}  // namespace ropecheck
