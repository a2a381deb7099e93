// run_side(), RoundOrder and available_implementations() (gate_rounds.h).
#include "gate/gate_rounds.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <string_view>
#include <nlohmann/json.hpp>

#include "bench/format/bench_json.h"
#include "core/errors.h"
#include "gate/child_process.h"
#include "gate/compare_rule.h"

namespace ropecheck {
namespace {

std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& w : words) text += (text.empty() ? "" : " ") + w;
  return text;
}

// Runs argv into dir/LOG_NAME; a non-zero exit is bad input naming the command and the log.
void run_or_throw(const std::vector<std::string>& argv, const std::filesystem::path& dir,
                  const std::string& log_name, const std::string& what, bool in_dir = false) {
  std::filesystem::create_directories(dir);
  const auto log = dir / log_name;
  std::filesystem::remove(log);
  const int code = run_child(argv, log, in_dir ? dir : std::filesystem::path());
  if (code != 0) {
    throw InvalidInput(fmt::format("{}: `{}` exited with {} (its output: {})", what, joined(argv),
                                   code, log.string()));
  }
}

}  // namespace

std::string_view to_string(GateMeasure measure) {
  return measure == GateMeasure::time ? "time" : "limit";
}

void ProcessValues::merge(const ProcessValues& other) {
  time_ns.insert(other.time_ns.begin(), other.time_ns.end());
  limit_time.insert(other.limit_time.begin(), other.limit_time.end());
}

std::string exact_case_filter(const std::string& key) {
  std::string filter = "^";
  std::string_view rest = key;
  for (const std::string_view kind : {"plugin", "python"}) {
    if (rest.starts_with(kind) && rest.substr(kind.size()).starts_with("/*/")) {
      filter += fmt::format("{}/[^/]+/", kind);
      rest.remove_prefix(kind.size() + 3);
    }
  }
  for (const char c : rest) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) filter += '\\';
    filter += c;
  }
  return filter + "$";
}

std::vector<std::size_t> shuffled_case_order(std::size_t count, std::mt19937_64& engine) {
  std::vector<std::size_t> order(count);
  for (std::size_t i = 0; i < count; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), engine);
  return order;
}

std::string case_key(const std::string& name) {
  for (const std::string_view kind : {"plugin/", "python/"}) {
    if (!name.starts_with(kind)) continue;
    const auto end = name.find('/', kind.size());
    return end == std::string::npos ? name : std::string(kind) + "*" + name.substr(end);
  }
  return name;
}

ProcessValues run_side(const GateSide& side, const BenchSettings& settings,
                       const std::filesystem::path& dir) {
  auto argv = side.bench_command;
  for (std::string arg : {"--filter", settings.filter.c_str()}) argv.push_back(arg);
  // `--out .` in the round's own directory: both sides' command lines are then the same length
  // (gate.cc gives their programs same-length names too), see bench_command in gate_rounds.h.
  argv.insert(argv.end(), {"--repetitions", std::to_string(settings.repetitions), "--min-time",
                           fmt::format("{}", settings.min_time), "--threads", "1", "--out", "."});
  run_or_throw(argv, dir, "bench.log", fmt::format("gate: the {} side's bench", side.label), true);
  ProcessValues values;
  for (const auto& [name, c] : read_bench_json(dir)) {
    if (c.is_probe()) continue;
    const std::string key = case_key(name);
    values.time_ns[key] = median(c.real_time_ns);
    if (!c.limit_fraction.empty()) {
      std::vector<double> relative;  // case time / probe time
      for (const double f : c.limit_fraction) relative.push_back(1 / f);
      values.limit_time[key] = median(relative);
    }
  }
  return values;
}

bool RoundOrder::next_base_first() {
  if (pending_) {
    pending_ = false;
    return pending_value_;
  }
  const bool first = std::bernoulli_distribution(0.5)(engine_);
  pending_ = true;
  pending_value_ = !first;
  return first;
}

std::vector<std::string> available_implementations(const GateSide& side,
                                                   const std::filesystem::path& dir) {
  auto argv = side.bench_command;
  argv.back() = "list";  // the command's "bench"
  argv.push_back("--json");
  const std::string log_name = side.label + "-list.json";
  run_or_throw(argv, dir, log_name, fmt::format("gate: listing the {} side", side.label));
  std::ifstream in(dir / log_name);
  std::vector<std::string> ids;
  try {
    // The log holds stderr too; the JSON document starts at the first '{'.
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    const auto start = text.find('{');
    const auto doc = nlohmann::json::parse(text.substr(start == std::string::npos ? 0 : start));
    for (const auto& impl : doc.at("rope_implementations")) {
      if (impl.at("capabilities").at("available").get<bool>()) {
        ids.push_back(impl.at("id").get<std::string>());
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw InvalidInput(fmt::format("gate: the {} side's `list --json` is not what ropecheck "
                                   "writes ({}): {}", side.label, e.what(),
                                   (dir / log_name).string()));
  }
  return ids;
}

}  // namespace ropecheck
