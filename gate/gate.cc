// run_gate(): plan the sides and the suite, run the rounds (adding some while cases are
// INCONCLUSIVE and a --max-seconds budget allows), judge, print and write (gate.h).
#include "gate/gate.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <ctime>
#include <optional>
#include <ostream>
#include <set>

#include "core/errors.h"
#include "core/logging.h"
#include "core/machine_info.h"
#include "core/result_files.h"
#include "gate/cache_boundary.h"
#include "gate/counted_gate.h"
#include "gate/counted_runner.h"
#include "gate/cpu_pinning.h"
#include "gate/child_process.h"
#include "gate/gate_json.h"
#include "gate/gate_junit.h"
#include "gate/gate_report.h"
#include "gate/gate_result.h"
#include "gate/gated_cases.h"

namespace ropecheck {
namespace {

using SteadyClock = std::chrono::steady_clock;

void validate(const GateOptions& o) {
  const bool executables = !o.base.empty() || !o.current.empty();
  const bool plugins = !o.base_plugin.empty() || !o.plugin.empty();
  const bool pythons = !o.base_python.empty() || !o.python.empty();
  if (int{executables} + int{plugins} + int{pythons} != 1 || (executables && (o.base.empty() || o.current.empty())) ||
      (plugins && (o.base_plugin.empty() || o.plugin.empty())) ||
      (pythons && (o.base_python.empty() || o.python.empty()))) {
    throw InvalidInput("gate: give --base OLD --current NEW (two ropecheck executables), "
                       "--base-plugin OLD.so --plugin NEW.so, or --base-python OLD.py:FUNCTION "
                       "--python NEW.py:FUNCTION: one pair");
  }
  if (o.counted && !executables) {
    throw InvalidInput("gate --measure counted gates two ropecheck executables (--base, --current): a "
                       "plugin or a Python function runs in a worker process that callgrind does not count");
  }
  if (o.counted && (o.counted_calls < 1 || o.counted_calls > 100000)) {
    throw InvalidInput(fmt::format("--counted-calls must be in [1, 100000], got {}", o.counted_calls));
  }
  if (o.warmup_rounds < 1) {
    throw InvalidInput("--warmup-rounds must be >= 1: the first one also finds the cases to gate");
  }
  if (o.measure == MeasureRule::automatic && o.pilot_rounds < kMinPilotRounds) {
    throw InvalidInput(fmt::format("--pilot-rounds must be >= {} with --measure auto, got {}",
                                   kMinPilotRounds, o.pilot_rounds));
  }
  if (o.rounds < kMinRounds) {
    throw InvalidInput(fmt::format("--rounds must be >= {}, got {}", kMinRounds, o.rounds));
  }
  if (o.repetitions < 1) throw InvalidInput(fmt::format("--repetitions must be >= 1, got {}", o.repetitions));
  if (!(o.min_time > 0 && o.min_time <= 60)) {
    throw InvalidInput(fmt::format("--min-time must be in (0, 60] seconds, got {}", o.min_time));
  }
  if (!(o.max_seconds >= 0)) throw InvalidInput("--max-seconds must be >= 0");
  // The rule's own checks (threshold, alpha) run before anything is measured.
  judge_rounds({{"check", {1, 1, 1}, ""}}, {o.counted ? o.timed_threshold_percent : o.threshold_percent, o.alpha, o.trim});
  if (o.counted) judge_counted({"check", 1, {1}, 1}, {"check", 1, {1}, 1}, o.threshold_percent, {});
}

// DIR/sides/NAME -> target (absolute), so that both sides' paths have the same length (see
// GateSide). A bare program name (looked up on PATH) is left as it is.
std::string same_length_alias(const std::string& target, const std::filesystem::path& out_dir,
                              const std::string& name) {
  if (target.find('/') == std::string::npos) return target;
  std::error_code error;
  if (!std::filesystem::exists(target, error)) {
    throw InvalidInput(fmt::format("gate: '{}' does not exist", target));
  }
  const auto dir = std::filesystem::absolute(out_dir) / "sides";
  std::filesystem::create_directories(dir);
  const auto link = dir / name;
  std::filesystem::remove(link, error);
  std::filesystem::create_symlink(std::filesystem::absolute(target), link);
  return link.string();
}

// A Python side: FILE.py:FUNCTION with the file behind DIR/sides/NAME.py, so that both sides'
// functions are python/NAME.FUNCTION (paired by case_key) and their command lines as long.
std::vector<std::string> python_side(const std::string& target, const GateOptions& o, const std::string& name) {
  const auto colon = target.rfind(':');
  if (colon == std::string::npos || !target.substr(0, colon).ends_with(".py")) {
    throw InvalidInput(fmt::format("gate: --base-python and --python take FILE.py:FUNCTION, got '{}'", target));
  }
  const std::string file = target.substr(0, colon);
  std::vector<std::string> argv{this_executable().string(), "bench", "--python",
                                same_length_alias(file.find('/') == std::string::npos ? "./" + file : file,
                                                  o.out_dir, name + ".py") +
                                    target.substr(colon)};
  if (!o.python_exe.empty()) argv.insert(argv.end(), {"--python-exe", o.python_exe});
  return argv;
}

std::vector<GateSide> sides_of(const GateOptions& o) {
  if (!o.base.empty()) {
    return {{"base", {same_length_alias(o.base, o.out_dir, "base"), "bench"}},
            {"current", {same_length_alias(o.current, o.out_dir, "curr"), "bench"}}};
  }
  if (!o.base_python.empty()) {
    return {{"base", python_side(o.base_python, o, "base")}, {"current", python_side(o.python, o, "curr")}};
  }
  const std::string self = this_executable().string();
  return {{"base", {self, "bench", "--plugin", same_length_alias(o.base_plugin.string(), o.out_dir, "base.so")}},
          {"current", {self, "bench", "--plugin", same_length_alias(o.plugin.string(), o.out_dir, "curr.so")}}};
}

// The implementation ids available on both sides.
std::vector<std::string> ids_on_both_sides(const GateOptions& o, const std::vector<GateSide>& sides) {
  const auto base_ids = available_implementations(sides[0], o.out_dir);
  const auto current_ids = available_implementations(sides[1], o.out_dir);
  std::vector<std::string> both;
  for (const auto& id : current_ids) {
    if (std::find(base_ids.begin(), base_ids.end(), id) != base_ids.end()) both.push_back(id);
  }
  return both;
}

// `ids`: the implementations both sides have (listed when the default rule is needed).
std::string resolve_filter(const GateOptions& o, const std::vector<std::string>& ids) {
  if (!o.filter.empty()) return o.filter;
  if (!o.base_plugin.empty()) return outside_gate_filter("plugin");
  if (!o.base_python.empty()) return outside_gate_filter("python");
  // A counted gate times only what it does not count (under the default rule: the DRAM-bound shape).
  if (o.counted) return timed_half_filter(fastest_kernels(ids));
  return default_gate_filter(fastest_kernels(ids));
}

// What the counted half counts: the default rule at the levels Valgrind runs (or --filter).
CountedGatePlan counted_plan(const GateOptions& o, const std::vector<std::string>& ids) {
  CountedGatePlan plan;
  plan.valgrind = require_valgrind("gate --measure counted");
  const auto kernels = fastest_counted_kernels(ids);
  plan.filter = o.filter.empty() ? default_gate_filter(kernels) : o.filter;
  plan.calls = o.counted_calls;
  plan.jobs = o.counted_jobs > 0 ? o.counted_jobs : std::max(1, usable_cpus());
  plan.threshold_percent = o.threshold_percent;
  plan.counted_isa = counted_level(kernels);
  plan.isa_note = counted_level_note(plan.counted_isa);
  return plan;
}

std::string caches_text(const std::vector<CacheLevel>& caches) {
  std::string text;
  for (const auto& c : caches) {
    text += fmt::format("{}L{} {}", text.empty() ? "" : ", ", c.level, byte_size_text(c.bytes));
  }
  return text.empty() ? "unknown" : text;
}

// The keys of the cases both sides measured in the warm-up, sorted; the others into `unpaired`.
std::vector<std::string> cases_on_both_sides(const ProcessValues& base, const ProcessValues& current,
                                             std::vector<std::string>& unpaired) {
  std::vector<std::string> both;
  for (const auto* side : {&base, &current}) {
    const auto* other = side == &base ? &current : &base;
    for (const auto& [key, _] : side->time_ns) {
      if (!other->time_ns.contains(key)) unpaired.push_back(key);
      else if (side == &base) both.push_back(key);
    }
  }
  return both;
}

// Cases measured on both sides in every round; the others become notes.
std::vector<std::string> paired_cases(const std::vector<Round>& rounds, std::vector<std::string>& notes) {
  std::set<std::string> all, every;
  bool first = true;
  for (const auto& round : rounds) {
    std::set<std::string> here;
    for (const auto* side : {&round.base, &round.current}) {
      for (const auto& [key, _] : side->time_ns) all.insert(key);
    }
    for (const auto& [key, _] : round.base.time_ns) {
      if (round.current.time_ns.contains(key)) here.insert(key);
    }
    if (first) {
      every = here;
      first = false;
    } else {
      std::erase_if(every, [&](const std::string& k) { return !here.contains(k); });
    }
  }
  for (const auto& key : all) {
    if (!every.contains(key)) notes.push_back(fmt::format("{}: not measured on both sides in every round; not judged", key));
  }
  return {every.begin(), every.end()};
}

// The measure the pilot rounds choose for `key` (measure_choice.h); none when some pilot round
// lacks the case on a side.
std::optional<MeasureChoice> pilot_choice(const std::vector<Round>& pilot, const std::string& key) {
  std::vector<double> time_ratios, limit_ratios;
  bool has_limit = true;
  for (const auto& round : pilot) {
    if (!round.base.time_ns.contains(key) || !round.current.time_ns.contains(key)) return std::nullopt;
    time_ratios.push_back(round.current.time_ns.at(key) / round.base.time_ns.at(key));
    has_limit = has_limit && round.base.limit_time.contains(key) && round.current.limit_time.contains(key);
    if (has_limit) limit_ratios.push_back(round.current.limit_time.at(key) / round.base.limit_time.at(key));
  }
  if (!has_limit) limit_ratios.clear();
  return choose_measure(time_ratios, limit_ratios);
}

void judge(GateResult& result, const std::vector<CacheLevel>& caches) {
  result.series.clear();
  result.notes.clear();
  for (const auto& key : result.unpaired) {
    result.notes.push_back(fmt::format("{}: measured on one side only; not judged", key));
  }
  if (result.cpu < 0) {
    result.notes.push_back("bench processes were not pinned to one CPU: expect more noise (cpu_pinning.h)");
  }
  if (caches.empty()) {
    result.notes.push_back("this machine's cache sizes are unknown (no /sys/devices/system/cpu/cpu0/cache): "
                           "no case could be flagged as on a cache boundary");
  }
  std::vector<CaseRounds> cases;
  for (const auto& key : paired_cases(result.rounds, result.notes)) {
    CaseSeries s;
    s.name = key;
    bool has_limit = true;
    for (const auto& round : result.rounds) {
      s.base_time_ns.push_back(round.base.time_ns.at(key));
      s.current_time_ns.push_back(round.current.time_ns.at(key));
      has_limit = has_limit && round.base.limit_time.contains(key) && round.current.limit_time.contains(key);
    }
    if (has_limit) {
      for (const auto& round : result.rounds) {
        s.base_limit_time.push_back(round.base.limit_time.at(key));
        s.current_limit_time.push_back(round.current.limit_time.at(key));
      }
    }
    s.measure = has_limit && result.measure_rule != MeasureRule::time ? GateMeasure::limit : GateMeasure::time;
    if (result.measure_rule == MeasureRule::limit && !has_limit) {
      result.notes.push_back(fmt::format("{}: no limit_fraction; judged on time", key));
    }
    if (result.measure_rule == MeasureRule::automatic) {
      if (const auto choice = pilot_choice(result.pilot_rounds, key)) {
        s.choice = *choice;
        if (!has_limit) s.choice.measure = GateMeasure::time;
        s.measure = s.choice.measure;
      } else {
        result.notes.push_back(fmt::format("{}: not in every pilot round on both sides; judged on {}", key,
                                           to_string(s.measure)));
      }
    }
    const bool by_limit = s.measure == GateMeasure::limit;
    const auto& b = by_limit ? s.base_limit_time : s.base_time_ns;
    const auto& c = by_limit ? s.current_limit_time : s.current_time_ns;
    for (std::size_t r = 0; r < b.size(); ++r) s.ratios.push_back(c[r] / b[r]);
    std::string flag;
    if (const auto bytes = working_set_bytes(key)) flag = cache_boundary_flag(*bytes, caches);
    cases.push_back({key, s.ratios, flag});
    result.series.push_back(std::move(s));
  }
  if (cases.empty()) {
    throw InvalidInput(fmt::format("gate: no case measured on both sides (filter '{}')", result.filter));
  }
  result.judgement = judge_rounds(cases, result.settings);
}

}  // namespace

bool worth_more_rounds(const GateJudgement& judgement, double elapsed, double slowest_round,
                       double max_seconds) {
  return max_seconds > 0 && judgement.inconclusive > 0 && judgement.regressions == 0 &&
         elapsed + 2 * slowest_round <= max_seconds;
}

int run_gate(const GateOptions& options, std::ostream& out) {
  validate(options);
  prepare_out_dir(options.out_dir);
  // Rounds of an earlier gate in the same folder would mix into `compare base current`. Warm-up
  // and pilot rounds go to warmup/ and pilot/, outside what compare reads.
  for (const char* side : {"base", "current", "warmup", "pilot", "counted"}) {
    std::filesystem::remove_all(options.out_dir / side);
  }
  const auto start = SteadyClock::now();
  const auto sides = sides_of(options);
  const auto caches = read_cpu_caches();

  GateResult result;
  result.started = fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)));
  result.base = !options.base.empty() ? options.base
                : !options.base_python.empty() ? options.base_python : options.base_plugin.string();
  result.current = !options.current.empty() ? options.current
                   : !options.python.empty() ? options.python : options.plugin.string();
  // Each side's `list` runs once, and only where a rule of gated_cases.h needs what it lists.
  const bool executables = !options.base.empty();
  const auto ids = executables && (options.filter.empty() || options.counted) ? ids_on_both_sides(options, sides)
                                                                              : std::vector<std::string>{};
  result.filter = resolve_filter(options, ids);
  result.measure_rule = options.measure;
  result.settings = {options.counted ? options.timed_threshold_percent : options.threshold_percent,
                     options.alpha, options.trim};
  result.repetitions = options.repetitions;
  result.min_time = options.min_time;
  result.seed = options.seed;
  result.warmup_rounds = options.warmup_rounds;
  const auto out_dir = std::filesystem::absolute(options.out_dir);
  // The counted half first, before the pinning below: its processes share every CPU (counts do
  // not depend on it), which the timed rounds must not.
  if (options.counted) {
    const CountedGatePlan plan = counted_plan(options, ids);
    const auto counted_cases = counted_gate_cases(plan, sides, out_dir, result.unpaired);
    if (!counted_cases.empty()) result.counted = run_counted_gate(plan, sides, counted_cases, out_dir);
  }
  std::string unpinned;
  if (const auto cpu = pin_to_one_cpu(options.cpu, unpinned)) {
    result.cpu = *cpu;
  } else if (options.cpu >= 0) {
    throw InvalidInput(fmt::format("gate: --cpu {}: {}", options.cpu, unpinned));
  } else {
    progress_log().warn("gate: bench processes not pinned to a CPU ({}): expect more noise", unpinned);
  }
  result.cpu_model = this_machine().cpu_model;
  result.caches = caches_text(caches);
  result.command_line = options.command_line;
  const BenchSettings bench{result.filter, options.repetitions, options.min_time};
  progress_log().info("gate: {} rounds of {} vs {}, filter '{}'", options.rounds, result.base,
                      result.current, result.filter);

  RoundOrder order(options.seed);
  // Warm-up rounds: each side once over the whole suite, not judged. They also find the cases.
  // (A counted gate with nothing to time has none.)
  ProcessValues base_cases, current_cases;
  for (std::size_t i = 0; i < (result.filter.empty() ? 0 : options.warmup_rounds); ++i) {
    const auto round_start = SteadyClock::now();
    const std::string name = fmt::format("warmup-{:02}", i + 1);
    const bool base_first = i % 2 == 0;
    for (const int which : base_first ? std::array{0, 1} : std::array{1, 0}) {
      const GateSide& side = sides[static_cast<std::size_t>(which)];
      (which == 0 ? base_cases : current_cases)
          .merge(run_side(side, bench, out_dir / "warmup" / side.label / name));
    }
    progress_log().info("gate: {} ({} first) in {:.1f}s, not judged", name, base_first ? "base" : "current",
                        std::chrono::duration<double>(SteadyClock::now() - round_start).count());
  }
  auto keys = cases_on_both_sides(base_cases, current_cases, result.unpaired);
  if (options.counted) {  // the counted half judged these; what remains is timed
    std::erase_if(keys, [](const std::string& key) { return route_case(key).counted; });
    result.timed_ran = !keys.empty();
  }
  if (keys.empty() && !result.counted.ran) {
    throw InvalidInput(fmt::format("gate: no case measured on both sides (filter '{}')", result.filter));
  }

  // A round: case by case in a shuffled order, a process of that case on each side, into
  // `rounds` and its files under root/<side>/round-NN/.
  const auto run_round = [&](std::vector<Round>& rounds, const std::filesystem::path& root, const char* what) {
    Round round;
    round.base_first = order.next_base_first();
    const auto round_start = SteadyClock::now();
    const std::string name = fmt::format("round-{:02}", rounds.size() + 1);
    for (const std::size_t c : shuffled_case_order(keys.size(), order.engine())) {
      const BenchSettings one_case{exact_case_filter(keys[c]), options.repetitions, options.min_time};
      for (const int which : round.base_first ? std::array{0, 1} : std::array{1, 0}) {
        const GateSide& side = sides[static_cast<std::size_t>(which)];
        (which == 0 ? round.base : round.current)
            .merge(run_side(side, one_case, root / side.label / name / fmt::format("case-{:02}", c + 1)));
      }
    }
    round.seconds = std::chrono::duration<double>(SteadyClock::now() - round_start).count();
    progress_log().info("gate: {} {} ({} first) in {:.1f}s", what, name, round.base_first ? "base" : "current",
                        round.seconds);
    rounds.push_back(std::move(round));
  };
  const auto run_judged_round = [&] { run_round(result.rounds, out_dir, "judged"); };
  if (result.timed_ran) {
    if (options.measure == MeasureRule::automatic) {
      for (std::size_t i = 0; i < options.pilot_rounds; ++i) {
        run_round(result.pilot_rounds, out_dir / "pilot", "pilot, not judged:");
      }
    }
    for (std::size_t i = 0; i < options.rounds; ++i) run_judged_round();
    judge(result, caches);
  }

  const auto more = [&] {
    double slowest = 0;
    for (const auto& r : result.rounds) slowest = std::max(slowest, r.seconds);
    const double elapsed = std::chrono::duration<double>(SteadyClock::now() - start).count();
    return result.timed_ran && worth_more_rounds(result.judgement, elapsed, slowest, options.max_seconds);
  };
  while (more()) {
    run_judged_round();
    run_judged_round();
    result.budget_used = true;
    judge(result, caches);
  }
  result.seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();

  print_gate_table(result, out);
  out << gate_summary_line(result) << "\n";
  write_json_file(gate_json(result), options.out_dir / "gate.json");
  if (!options.junit.empty()) write_text_file(gate_junit(result), options.junit);
  if (!options.markdown.empty()) write_text_file(gate_markdown(result), options.markdown);
  progress_log().info("gate: wrote {}", (options.out_dir / "gate.json").string());
  return combined_exit_code(result);
}

}  // namespace ropecheck
