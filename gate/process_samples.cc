// read_bench_samples() (process_samples.h).
#include "gate/process_samples.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "core/errors.h"
#include "gate/compare_rule.h"

namespace ropecheck {
namespace {

std::vector<std::filesystem::path> bench_files_under(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir, error)) {
    if (entry.is_regular_file() && entry.path().filename() == "bench.json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

BenchSamples read_bench_samples(const std::filesystem::path& path, std::size_t min_samples) {
  std::error_code error;
  BenchSamples samples;
  if (!std::filesystem::is_directory(path, error) ||
      std::filesystem::is_regular_file(path / "bench.json", error)) {
    samples.cases = read_bench_json(path, min_samples);
    samples.files = 1;
    return samples;
  }
  const auto files = bench_files_under(path);
  if (files.empty()) {
    throw InvalidInput(fmt::format("{}: no bench.json in it or below it", path.string()));
  }
  samples.per_process = true;
  samples.files = files.size();
  for (const auto& file : files) {
    for (const auto& [name, c] : read_bench_json(file)) {
      BenchCase& merged = samples.cases[name];
      merged.name = name;
      merged.real_time_ns.push_back(median(c.real_time_ns));
      merged.cpu_time_ns.push_back(median(c.cpu_time_ns));
      if (!c.limit_fraction.empty()) merged.limit_fraction.push_back(median(c.limit_fraction));
    }
  }
  for (const auto& [name, c] : samples.cases) {
    if (!c.limit_fraction.empty() && c.limit_fraction.size() != c.real_time_ns.size()) {
      throw InvalidInput(fmt::format("{}: case '{}' has limit_fraction in {} of its {} runs",
                                     path.string(), name, c.limit_fraction.size(),
                                     c.real_time_ns.size()));
    }
    if (c.real_time_ns.size() < min_samples) {
      throw InvalidInput(fmt::format(
          "{}: case '{}' is in {} of the {} bench.json files below it, fewer than the {} "
          "processes needed", path.string(), name, c.real_time_ns.size(), files.size(), min_samples));
    }
  }
  return samples;
}

}  // namespace ropecheck
